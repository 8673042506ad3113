import { getEventListeners } from 'node:events';
import type { Admission, Permit } from '@sluice/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startRedis } from './helpers/redis-server.js';
import { StoreFactory, eventually, redisTime, sleep } from './helpers/stores.js';

// Started while the file loads: if Redis cannot start, the whole file fails, saying why.
const redis = await startRedis();
const look = redis.client();
let stores: StoreFactory | undefined;

afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  await stores?.closeAll();
});

function permitOf(admission: Admission): Permit {
  if (!admission.admitted) throw new Error(`expected an admission, got ${JSON.stringify(admission)}`);
  return admission.permit;
}

async function queueLength(name: string): Promise<number> {
  if (stores === undefined) throw new Error('the test opened no StoreFactory');
  return look.zcard(stores.key(name, 'queue'));
}

describe('the distributed semaphore', () => {
  it('admits maxActive calls, queues the next maxQueue and sheds the rest with the cluster-wide counts', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    const options = { maxActive: 2, maxQueue: 2 };
    const held = [
      permitOf(await a.semaphore('s', options).acquire()),
      permitOf(await b.semaphore('s', options).acquire()),
    ];
    const waiting = [a.semaphore('s', options).acquire(), b.semaphore('s', options).acquire()];
    await eventually('two calls wait', async () => (await queueLength('s')) === 2);
    expect(await a.semaphore('s', options).acquire()).toEqual({ admitted: false, active: 2, queued: 2 });
    expect(await b.semaphore('s', options).acquire()).toEqual({ admitted: false, active: 2, queued: 2 });
    for (const permit of held) permit.release();
    for (const admission of await Promise.all(waiting)) permitOf(admission).release();
    await eventually('every lease is given back', async () => (await look.zcard(stores!.key('s', 'leases'))) === 0);
  });

  it('wakes waiters in arrival order across stores as permits are released', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    const options = { maxActive: 1, maxQueue: 10 };
    let holder = permitOf(await a.semaphore('fifo', options).acquire());
    const order: string[] = [];
    const waiters: Promise<Permit>[] = [];
    for (const [name, store] of [
      ['b1', b],
      ['a2', a],
      ['b3', b],
      ['a4', a],
    ] as const) {
      waiters.push(
        store
          .semaphore('fifo', options)
          .acquire()
          .then((admission) => (order.push(name), permitOf(admission))),
      );
      await eventually(`${name} waits`, async () => (await queueLength('fifo')) === waiters.length);
    }
    for (const waiter of waiters) {
      holder.release();
      holder = await waiter;
    }
    holder.release();
    expect(order).toEqual(['b1', 'a2', 'b3', 'a4']);
  });

  it('takes an aborted waiter out of the cluster-wide queue at once and leaves no listener', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    const options = { maxActive: 1, maxQueue: 5 };
    const held = permitOf(await store.semaphore('abort', options).acquire());
    const controller = new AbortController();
    const waiting = store.semaphore('abort', options).acquire(controller.signal);
    await eventually('the call waits', async () => (await queueLength('abort')) === 1);
    controller.abort(new Error('caller went away'));
    await expect(waiting).rejects.toThrow('caller went away');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // Commands on one connection run in order: once this answers, the leave has run.
    await store.get('anything');
    expect(await queueLength('abort')).toBe(0);
    expect(store.semaphore('abort', options).queued).toBe(0);
    held.release();
  });

  it('rejects at once, without asking Redis, when the signal has already fired', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    const signal = AbortSignal.abort(new Error('already gone'));
    await expect(store.semaphore('pre', { maxActive: 1, maxQueue: 1 }).acquire(signal)).rejects.toThrow('already gone');
    expect(await look.exists(stores.key('pre', 'leases'))).toBe(0);
  });

  it('renews a lease while the call runs, well past its TTL, and frees the slot on release', async () => {
    stores = new StoreFactory(redis);
    // Renewed at 0.8 of the lease: a lease of 1 s leaves 200 ms for a loaded machine's late timer (a lease of
    // 200 ms, 40 ms, was seen to run out).
    const a = stores.open({ leaseMs: 1_000 }).store;
    const b = stores.open({ leaseMs: 1_000 }).store;
    const options = { maxActive: 1, maxQueue: 0 };
    const held = permitOf(await a.semaphore('renew', options).acquire());
    await sleep(3_500);
    expect(await b.semaphore('renew', options).acquire()).toEqual({ admitted: false, active: 1, queued: 0 });
    held.release();
    await a.get('sync');
    permitOf(await b.semaphore('renew', options).acquire()).release();
  });

  it('keeps a waiter in line past the TTL while its replica lives', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open({ leaseMs: 1_000 });
    const options = { maxActive: 1, maxQueue: 1 };
    const held = permitOf(await store.semaphore('beat', options).acquire());
    const waiting = store.semaphore('beat', options).acquire();
    await sleep(3_500);
    expect(await queueLength('beat')).toBe(1);
    held.release();
    permitOf(await waiting).release();
  });

  it('releases only its own lease, once', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    const options = { maxActive: 3, maxQueue: 0 };
    const first = permitOf(await store.semaphore('own', options).acquire());
    const second = permitOf(await store.semaphore('own', options).acquire());
    first.release();
    first.release();
    await store.get('sync');
    expect(await look.zcard(stores.key('own', 'leases'))).toBe(1);
    expect(store.semaphore('own', options).active).toBe(1);
    second.release();
    await store.get('sync');
    expect(await look.zcard(stores.key('own', 'leases'))).toBe(0);
  });

  it('hands out fencing tokens that only grow, per key, across stores', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    const fences: number[] = [];
    for (const store of [a, b, a, b]) {
      const permit = permitOf(await store.lock('fenced').acquire());
      fences.push(permit.fence);
      permit.release();
    }
    expect(fences).toEqual([...fences].sort((x, y) => x - y));
    expect(new Set(fences).size).toBe(4);
  });

  it('lets every key of a semaphore expire once it is idle, its fence counter too', async () => {
    // Attack: a caller granted one mutex tool calls it with a new argument each time; each argument's lock left a
    // fence counter with no expiry, so Redis grew by a key per call, for good.
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    for (let i = 0; i < 20; i++) {
      const permit = permitOf(
        await store.semaphore(`arg-${i}`, { maxActive: 1, maxQueue: 0, leaseMs: 1_000 }).acquire(),
      );
      permit.release();
    }
    for (let i = 0; i < 20; i++) {
      const fence = stores.key(`arg-${i}`, 'fence');
      expect(await look.exists(fence)).toBe(1);
      const ttl = await look.pttl(fence);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(1_000);
    }
    // Tokens still only grow across an expiry: a new counter starts at Redis time in microseconds.
    const before = permitOf(await store.semaphore('arg-0', { maxActive: 1, maxQueue: 0, leaseMs: 1_000 }).acquire());
    before.release();
    await look.del(stores.key('arg-0', 'fence'));
    const after = permitOf(await store.semaphore('arg-0', { maxActive: 1, maxQueue: 0, leaseMs: 1_000 }).acquire());
    after.release();
    expect(after.fence).toBeGreaterThan(before.fence);
  });

  it('never takes a slot on the synchronous path: tryAcquire returns undefined', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    expect(store.semaphore('sync', { maxActive: 5, maxQueue: 5 }).tryAcquire()).toBeUndefined();
    expect(await look.exists(stores.key('sync', 'leases'))).toBe(0);
  });

  it('logs store.redis.lease_lost when a running call finds its lease gone', async () => {
    stores = new StoreFactory(redis);
    const { store, logs } = stores.open({ leaseMs: 150 });
    const held = permitOf(await store.semaphore('lost', { maxActive: 1, maxQueue: 0 }).acquire());
    await look.del(stores.key('lost', 'leases'));
    await eventually('the loss is logged', () => logs.events('store.redis.lease_lost').length === 1);
    expect(logs.events('store.redis.lease_lost')[0]).toMatchObject({ key: 'lost', fence: held.fence });
    held.release();
  });

  it('drops the queue entry of a waiter that stopped beating once its TTL passes, and not before', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open({ leaseMs: 200 });
    const options = { maxActive: 1, maxQueue: 5 };
    const held = permitOf(await store.semaphore('ghost', options).acquire());
    // A waiter of a replica that died: first in line, never polls again. Its replica's acquire also set the queue's
    // keys to live as long as its entry (a key's expiry is never shortened); without that, the live waiter's own
    // 200 ms keys would have dropped the ghost with them whenever its polls came more than 200 ms apart.
    const ghostExpiry = (await redisTime(look)) + 400;
    await look.zadd(stores.key('ghost', 'queue'), 1, 'ghost');
    await look.zadd(stores.key('ghost', 'queue-expiry'), ghostExpiry, 'ghost');
    await look.pexpire(stores.key('ghost', 'queue'), 400);
    await look.pexpire(stores.key('ghost', 'queue-expiry'), 400);
    const waiting = store.semaphore('ghost', options).acquire();
    await eventually('the live call waits behind the ghost', async () => (await queueLength('ghost')) === 2);
    held.release();
    const permit = permitOf(await waiting);
    expect(await redisTime(look)).toBeGreaterThanOrEqual(ghostExpiry);
    expect(await look.zscore(stores.key('ghost', 'queue'), 'ghost')).toBeNull();
    permit.release();
  });

  it('forgets an idle semaphore and its channel', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    const options = { maxActive: 1, maxQueue: 1 };
    const held = permitOf(await store.semaphore('idle', options).acquire());
    const waiting = store.semaphore('idle', options).acquire();
    // Redis holds the queue entry before this store has read the script's reply: wait for the store's side too.
    await eventually('the call waits', async () => (await queueLength('idle')) === 1 && store.channelCount > 0);
    expect(store.channelCount).toBe(1);
    held.release();
    permitOf(await waiting).release();
    await eventually('the semaphore is collected', () => store.semaphoreCount === 0);
    expect(store.channelCount).toBe(0);
  });
});
