import { Tokens, definePlugin } from '@sluice/core';
import type { Store } from '@sluice/core';
import { createTestKit, textOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { concurrency } from '@sluice/plugin-concurrency';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RedisStoreErrorCode } from '../src/index.js';
import type { RedisStore } from '../src/index.js';
import { startRedis } from './helpers/redis-server.js';
import { StoreFactory, eventually } from './helpers/stores.js';

// Started while the file loads: if Redis cannot start, the whole file fails, saying why.
const redis = await startRedis();
let stores: StoreFactory | undefined;
let kit: TestKit | undefined;

afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  await kit?.close();
  kit = undefined;
  await stores?.closeAll();
  await redis.start();
});

function guardedKit(store: RedisStore): Promise<TestKit> {
  return createTestKit({
    store,
    plugins: [concurrency()],
    tools: [
      {
        name: 'limited',
        policy: { concurrency: { maxActive: 1, maxQueue: 0 }, destructive: false },
        handler: async () => ({ content: [{ type: 'text', text: 'ran' }] }),
      },
    ],
  });
}

describe('the Redis store in a Sluice server', () => {
  it('is what plugins resolve under Tokens.Store when passed as createServer({ store })', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    let seen: Store | undefined;
    let resolved: Store | undefined;
    const probe = definePlugin({
      name: 'probe',
      version: '0.0.0',
      apply({ services }) {
        seen = services.store;
        resolved = services.container.resolve(Tokens.Store);
      },
    });
    kit = await createTestKit({ store, plugins: [probe] });
    expect(seen).toBe(store);
    expect(resolved).toBe(store);
    expect(seen?.kind).toBe('redis');
  });

  it('under failClosed, a guarded call gets a JSON-RPC error with REDIS_UNAVAILABLE while Redis is lost', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    kit = await guardedKit(store);
    expect(textOf(await kit.call('limited'))).toBe('ran');
    await redis.stop();
    await eventually('the store sees Redis gone', () => !store.connected);
    const failure = await kit.call('limited').then(
      () => undefined,
      (error: unknown) => error as { code: number; message: string; data?: { code?: string } },
    );
    expect(failure?.code).toBe(-32603);
    expect(failure?.data?.code).toBe(RedisStoreErrorCode.REDIS_UNAVAILABLE);
    expect(failure?.message).toContain('is unavailable');
    await redis.start();
    await eventually('the store is back', () => store.connected);
    expect(textOf(await kit.call('limited'))).toBe('ran');
  });

  it('under failOpen, keeps serving guarded calls with a per-replica limit while Redis is lost', async () => {
    stores = new StoreFactory(redis);
    const { store, logs } = stores.open({ onRedisLoss: 'failOpen' });
    kit = await guardedKit(store);
    // Redis must be lost, not never reached: before its first connection a call waits up to the connect timeout.
    await store.ready();
    await redis.stop();
    await eventually('the store sees Redis gone', () => !store.connected);
    expect(textOf(await kit.call('limited'))).toBe('ran');
    expect(logs.events('store.redis.fail_open').length).toBeGreaterThanOrEqual(1);
  });
});
