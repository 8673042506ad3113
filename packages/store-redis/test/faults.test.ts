import { createServer as createNetServer } from 'node:net';
import type { Admission, Permit } from '@sluice/core';
import { SluiceError } from '@sluice/core';
import { createTestKit, errorOf, textOf } from '@sluice/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RedisStoreErrorCode } from '../src/index.js';
import { startRedis } from './helpers/redis-server.js';
import { StoreFactory, eventually } from './helpers/stores.js';

// Started while the file loads: if Redis cannot start, the whole file fails, saying why.
const redis = await startRedis();
const look = redis.client();
let stores: StoreFactory | undefined;

afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  await stores?.closeAll();
  await redis.start();
});

/** A loopback port with nothing listening on it. */
async function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 1));
    });
  });
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return SluiceError.is(error) ? error.code : `not a SluiceError: ${String(error)}`;
}

function permitOf(admission: Admission): Permit {
  if (!admission.admitted) throw new Error('expected an admission');
  return admission.permit;
}

describe('when Redis is unreachable at start', () => {
  it('fails closed with REDIS_UNAVAILABLE, naming the address and the cause in its log only', async () => {
    const port = await deadPort();
    stores = new StoreFactory({ ...redis, url: `redis://127.0.0.1:${port}` });
    const { store, logs } = stores.open({ connectTimeoutMs: 300 });
    const error = await store.ready().catch((e: unknown) => e);
    expect(SluiceError.is(error) && error.code).toBe(RedisStoreErrorCode.REDIS_UNAVAILABLE);
    // The error can reach a client: it says the store is unavailable, not where it is.
    expect((error as Error).message).toContain('The shared store is unavailable');
    expect((error as Error).message).not.toContain(`${port}`);
    const [lost] = logs.events('store.redis.lost');
    expect(String(lost?.where)).toContain(`127.0.0.1:${port}`);
    expect(String(lost?.reason)).toContain('ECONNREFUSED');
    expect(await codeOf(store.get('k'))).toBe(RedisStoreErrorCode.REDIS_UNAVAILABLE);
    expect(await codeOf(store.setIfAbsent('nonce', 1))).toBe(RedisStoreErrorCode.REDIS_UNAVAILABLE);
    expect(await codeOf(store.semaphore('s', { maxActive: 1, maxQueue: 1 }).acquire())).toBe(
      RedisStoreErrorCode.REDIS_UNAVAILABLE,
    );
    expect(logs.events('store.redis.lost')).toEqual([expect.objectContaining({ atStart: true, policy: 'failClosed' })]);
  });

  it('fails open onto local memory, loudly, when told to', async () => {
    const port = await deadPort();
    stores = new StoreFactory({ ...redis, url: `redis://127.0.0.1:${port}` });
    const { store, logs } = stores.open({ connectTimeoutMs: 200, onRedisLoss: 'failOpen' });
    await store.set('k', { v: 1 });
    expect(await store.get('k')).toEqual({ v: 1 });
    const options = { maxActive: 1, maxQueue: 0 };
    const held = permitOf(await store.semaphore('s', options).acquire());
    expect(await store.semaphore('s', options).acquire()).toEqual({ admitted: false, active: 1, queued: 0 });
    held.release();
    expect(logs.events('store.redis.fail_open').length).toBeGreaterThanOrEqual(1);
    expect(logs.events('store.redis.fail_open')[0]).toMatchObject({ level: 50, atStart: true });
  });
});

describe('when Redis restarts mid-run', () => {
  it('under failClosed: calls fail clearly while it is down, no waiter hangs, and calls succeed after', async () => {
    stores = new StoreFactory(redis);
    const { store, logs } = stores.open({ leaseMs: 1_000 });
    const kit = await createTestKit({
      store,
      tools: [
        {
          name: 'guarded',
          handler: async () => {
            const admission = await store.semaphore('tool', { maxActive: 1, maxQueue: 5 }).acquire();
            if (!admission.admitted) return { content: [{ type: 'text', text: 'busy' }], isError: true };
            admission.permit.release();
            return { content: [{ type: 'text', text: `ran with fence ${admission.permit.fence}` }] };
          },
        },
      ],
    });
    try {
      expect(textOf(await kit.call('guarded'))).toMatch(/^ran with fence \d+$/);
      const held = permitOf(await store.semaphore('held', { maxActive: 1, maxQueue: 5 }).acquire());
      // Its outcome is taken at once: it may fail while Redis is being stopped, before the test reads it.
      const waiting = codeOf(store.semaphore('held', { maxActive: 1, maxQueue: 5 }).acquire());
      await eventually('the call waits', async () => (await look.zcard(`${stores!.prefix}sem:{held}:queue`)) === 1);

      await redis.stop();
      await eventually('the store sees Redis gone', () => !store.connected);
      expect(await waiting).toBe(RedisStoreErrorCode.REDIS_UNAVAILABLE);
      held.release();
      const refused = await kit.call('guarded');
      expect(refused.isError).toBe(true);
      expect(errorOf(refused)?.code).toBe('TOOL_ERROR');
      expect(textOf(refused)).toContain('The shared store is unavailable');
      // Clients learn that the store is down, never where it is.
      expect(textOf(refused)).not.toContain(new URL(redis.url).host);
      expect(await codeOf(store.get('k'))).toBe(RedisStoreErrorCode.REDIS_UNAVAILABLE);
      expect(logs.events('store.redis.lost')).toHaveLength(1);

      await redis.start();
      await eventually('the store is back', () => store.connected);
      expect(textOf(await kit.call('guarded'))).toMatch(/^ran with fence \d+$/);
      await store.set('k', 'after');
      expect(await look.get(`${stores.prefix}kv:k`)).toBe('"after"');
      expect(logs.events('store.redis.recovered')).toHaveLength(1);
    } finally {
      await kit.close();
    }
  });

  it('under failOpen: limits hold per replica while it is down, and Redis takes over again after', async () => {
    stores = new StoreFactory(redis);
    const { store, logs } = stores.open({ onRedisLoss: 'failOpen' });
    const options = { maxActive: 1, maxQueue: 0 };
    permitOf(await store.semaphore('s', options).acquire()).release();

    await redis.stop();
    await eventually('the store sees Redis gone', () => !store.connected);
    const local = permitOf(await store.semaphore('s', options).acquire());
    expect(await store.semaphore('s', options).acquire()).toEqual({ admitted: false, active: 1, queued: 0 });
    await store.set('k', 'local');
    expect(await store.get('k')).toBe('local');
    expect(logs.events('store.redis.fail_open')).toHaveLength(1);

    await redis.start();
    await eventually('the store is back', () => store.connected);
    const remote = permitOf(await store.semaphore('s', options).acquire());
    expect(await look.zcard(`${stores.prefix}sem:{s}:leases`)).toBe(1);
    expect(await store.get('k')).toBeUndefined();
    remote.release();
    local.release();
    expect(logs.events('store.redis.recovered')[0]?.servedLocally).toBeTypeOf('number');
  });

  it('keeps fencing tokens growing after Redis lost every key in a restart', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    const before = permitOf(await store.lock('fenced').acquire());
    before.release();
    await redis.stop();
    await redis.start();
    await eventually(
      'the store is back',
      async () => store.connected && (await look.exists(`${stores!.prefix}sem:{fenced}:fence`)) === 0,
    );
    const after = permitOf(await store.lock('fenced').acquire());
    after.release();
    expect(after.fence).toBeGreaterThan(before.fence);
  });
});

describe('when Redis refuses a command', () => {
  it('fails it with REDIS_COMMAND_FAILED, attributed to the store, and keeps serving', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    await store.ready();
    // Something else wrote a hash where the store keeps a value: Redis answers the read with WRONGTYPE.
    await look.hset(`${stores.prefix}kv:greeting`, 'field', 'x');
    const error = await store.get('greeting').catch((e: unknown) => e);
    expect(SluiceError.is(error) && error.code).toBe(RedisStoreErrorCode.REDIS_COMMAND_FAILED);
    expect(SluiceError.is(error) && error.plugin).toBe('store-redis');
    expect((error as Error).message).toContain('WRONGTYPE');
    expect(await store.increment('count', 2)).toBe(2);
  });
});
