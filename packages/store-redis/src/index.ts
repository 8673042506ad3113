// The public API of @sluice/store-redis, listed by name: anything exported here is public.

export { RedisStore, redisStore } from './store.js';

export { RedisConnection, RedisLossPolicy, RedisStoreOptions } from './options.js';
export type { ResolvedRedisStoreOptions } from './options.js';

export { RedisStoreConfig, storeFromConfig } from './config.js';

export { RedisStoreErrorCode } from './errors.js';
export { VERSION } from './version.js';
