import type { Logger } from '@sluice/core';
import { parseOptions } from '@sluice/core';
import { z } from 'zod';
import { STORE_NAME } from './errors.js';
import { RedisLossPolicy, RedisStoreOptions } from './options.js';
import type { RedisStore } from './store.js';
import { redisStore } from './store.js';

/**
 * The `store` section of a gateway config file:
 * `store: { redis: "redis://127.0.0.1:6379" }`, plus the store's options.
 */
/** The description of a store option, as the options schema gives it. */
const describedAs = (key: 'keyPrefix' | 'leaseMs' | 'onRedisLoss' | 'connectTimeoutMs'): string =>
  RedisStoreOptions.shape[key].description ?? key;

export const RedisStoreConfig = z
  .object({
    redis: z
      .string()
      .regex(/^rediss?:\/\/\S+$/, 'use a redis:// or rediss:// URL')
      .describe('The Redis server: a redis:// or rediss:// URL (user and password in it, or from `${VAR}`).'),
    keyPrefix: z.string().max(200).optional().describe(describedAs('keyPrefix')),
    leaseMs: z.number().int().min(100).max(86_400_000).optional().describe(describedAs('leaseMs')),
    onRedisLoss: RedisLossPolicy.optional().describe(describedAs('onRedisLoss')),
    connectTimeoutMs: z.number().int().min(1).max(600_000).optional().describe(describedAs('connectTimeoutMs')),
  })
  .strict();
export type RedisStoreConfig = z.input<typeof RedisStoreConfig>;

/** Builds the store a config file asks for. Bad config throws here, naming the field. */
export function storeFromConfig(config: RedisStoreConfig, services: { logger?: Logger } = {}): RedisStore {
  const { redis, ...options } = parseOptions(STORE_NAME, RedisStoreConfig, config);
  return redisStore({ url: redis }, { ...options, ...(services.logger ? { logger: services.logger } : {}) });
}
