import { CoreErrorCode, SluiceError } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisStoreConfig, redisStore, storeFromConfig } from '../src/index.js';
import { startRedis } from './helpers/redis-server.js';
import { uniquePrefix } from './helpers/stores.js';

// Started while the file loads: if Redis cannot start, the whole file fails, saying why.
const redis = await startRedis();

afterAll(async () => {
  await redis.close();
});

function thrown(make: () => unknown): SluiceError {
  try {
    make();
  } catch (error) {
    if (SluiceError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a throw');
}

describe('options', () => {
  it('throws INVALID_OPTIONS at construction, naming the bad field', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => redisStore({ url: 'http://127.0.0.1:6379' }), 'url'],
      [() => redisStore({} as never), '(options)'],
      [() => redisStore({ client: {} } as never), 'client'],
      [() => redisStore({ url: redis.url }, { leaseMs: 50 }), 'leaseMs'],
      [() => redisStore({ url: redis.url }, { onRedisLoss: 'retry' as never }), 'onRedisLoss'],
      [() => redisStore({ url: redis.url }, { keyprefix: 'x' } as never), 'keyprefix'],
      [() => redisStore({ url: redis.url }, { connectTimeoutMs: 0 }), 'connectTimeoutMs'],
    ];
    for (const [make, field] of cases) {
      const error = thrown(make);
      expect(error.code).toBe(CoreErrorCode.INVALID_OPTIONS);
      expect(error.message).toContain(field);
    }
  });

  it('rejects every malformed option object without opening a connection', () => {
    fc.assert(
      fc.property(
        fc.record(
          { leaseMs: fc.oneof(fc.integer({ max: 99 }), fc.double(), fc.string()), onRedisLoss: fc.string() },
          { requiredKeys: [] },
        ),
        (options) => {
          fc.pre(
            Object.keys(options).length > 0 &&
              options.onRedisLoss !== 'failClosed' &&
              options.onRedisLoss !== 'failOpen',
          );
          expect(thrown(() => redisStore({ url: redis.url }, options as never)).code).toBe(
            CoreErrorCode.INVALID_OPTIONS,
          );
        },
      ),
    );
  });

  it('uses a client you own, and leaves it open when the store closes', async () => {
    const client = new Redis(redis.url);
    const store = redisStore({ client }, { keyPrefix: uniquePrefix(), logger: captureLogger().logger });
    await store.set('mine', 1);
    expect(await store.get('mine')).toBe(1);
    await store.close();
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
  });

  it('refuses calls once closed, with STORE_CLOSED', async () => {
    const store = redisStore({ url: redis.url }, { keyPrefix: uniquePrefix(), logger: captureLogger().logger });
    await store.ready();
    await store.close();
    const error = await store.get('k').catch((e: unknown) => e);
    expect(SluiceError.is(error) && error.code).toBe('STORE_CLOSED');
    const acquire = await store
      .semaphore('s', { maxActive: 1, maxQueue: 0 })
      .acquire()
      .catch((e: unknown) => e);
    expect(SluiceError.is(acquire) && acquire.code).toBe('STORE_CLOSED');
  });
});

describe('storeFromConfig', () => {
  it('builds a Redis store from a gateway config section', async () => {
    const logs = captureLogger();
    const store = storeFromConfig(
      { redis: redis.url, keyPrefix: uniquePrefix(), leaseMs: 2_000 },
      { logger: logs.logger },
    );
    try {
      expect(store.kind).toBe('redis');
      await store.set('from-config', 'yes');
      expect(await store.get('from-config')).toBe('yes');
    } finally {
      await store.close();
    }
  });

  it('names the bad field of a bad config section', () => {
    expect(thrown(() => storeFromConfig({ redis: 'localhost:6379' })).message).toContain('redis');
    expect(thrown(() => storeFromConfig({ redis: redis.url, leaseMs: -1 })).message).toContain('leaseMs');
    expect(RedisStoreConfig.safeParse({ redis: redis.url, onRedisLoss: 'failOpen' }).success).toBe(true);
  });
});
