import { SluiceError } from '@sluice/core';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RedisStoreErrorCode } from '../src/index.js';
import { startRedis } from './helpers/redis-server.js';
import { StoreFactory, sleep } from './helpers/stores.js';

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

describe('values in Redis', () => {
  it('reads back what another store wrote, as JSON', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    await a.set('ledger', { tools: { search: 'sha256:ab' }, version: 3 });
    expect(await b.get('ledger')).toEqual({ tools: { search: 'sha256:ab' }, version: 3 });
    expect(await look.get(`${stores.prefix}kv:ledger`)).toBe('{"tools":{"search":"sha256:ab"},"version":3}');
    expect(await b.get('missing')).toBeUndefined();
  });

  it('expires a value after its TTL, in Redis', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    await store.set('short', 'x', { ttlMs: 5_000 });
    const ttl = await look.pttl(`${stores.prefix}kv:short`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5_000);
    await store.set('gone', 1, { ttlMs: 50 });
    await sleep(120);
    expect(await store.get('gone')).toBeUndefined();
    await store.set('forever', 1);
    expect(await look.pttl(`${stores.prefix}kv:forever`)).toBe(-1);
  });

  it('lets exactly one of many concurrent setIfAbsent calls win, across stores', async () => {
    stores = new StoreFactory(redis);
    const all = [stores.open().store, stores.open().store, stores.open().store];
    const wins = await Promise.all(
      all.flatMap((store, i) => [0, 1, 2, 3].map((j) => store.setIfAbsent('nonce', `${i}.${j}`, { ttlMs: 10_000 }))),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
    const winner = wins.indexOf(true);
    expect(await all[0]!.get('nonce')).toBe(`${Math.floor(winner / 4)}.${winner % 4}`);
  });

  it('lets setIfAbsent win again once the earlier value expired', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    expect(await store.setIfAbsent('once', true, { ttlMs: 50 })).toBe(true);
    expect(await store.setIfAbsent('once', true, { ttlMs: 50 })).toBe(false);
    await sleep(120);
    expect(await store.setIfAbsent('once', true)).toBe(true);
  });

  it('deletes, saying whether there was something to delete', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    await store.set('k', 1);
    expect(await store.delete('k')).toBe(true);
    expect(await store.delete('k')).toBe(false);
    expect(await store.get('k')).toBeUndefined();
  });

  it('deletes by compare-and-delete only while the key holds the value expected, atomically across stores', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    await a.set('place', 'old-holder', { ttlMs: 60 });
    expect(await b.compareAndDelete('place', 'someone-else')).toBe(false);
    expect(await b.get('place')).toBe('old-holder');
    // The old holder's place lapsed in Redis and a newer holder took it: the old holder's release frees nothing.
    await sleep(120);
    expect(await b.setIfAbsent('place', 'new-holder', { ttlMs: 60_000 })).toBe(true);
    expect(await a.compareAndDelete('place', 'old-holder')).toBe(false);
    expect(await look.get(`${stores.prefix}kv:place`)).toBe('"new-holder"');
    // Of many concurrent releases by the holder, exactly one deletes; none of another's.
    const released = await Promise.all(
      [a, b, a, b].flatMap((store) => [
        store.compareAndDelete('place', 'new-holder'),
        store.compareAndDelete('place', 'x'),
      ]),
    );
    expect(released.filter(Boolean)).toHaveLength(1);
    expect(await look.exists(`${stores.prefix}kv:place`)).toBe(0);
    // Values compare as the JSON the store wrote: a number is not its string.
    await a.set('n', 7);
    expect(await b.compareAndDelete('n', '7')).toBe(false);
    expect(await b.compareAndDelete('n', 7)).toBe(true);
    await a.set('flag', true);
    expect(await b.compareAndDelete('flag', true)).toBe(true);
  });

  it('increments atomically across stores, with the TTL set on creation only', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).increment('hits', 1, { ttlMs: 60_000 })),
    );
    expect([...results].sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const ttl = await look.pttl(`${stores.prefix}kv:hits`);
    await look.pexpire(`${stores.prefix}kv:hits`, 30_000);
    await a.increment('hits', 5, { ttlMs: 60_000 });
    expect(await look.pttl(`${stores.prefix}kv:hits`)).toBeLessThanOrEqual(30_000);
    expect(ttl).toBeGreaterThan(30_000);
    expect(await b.get('hits')).toBe(45);
  });

  it('counts one window across stores, started by the first increment and ended by Redis', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    const windows = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).incrementWindow('rate', 60_000)),
    );
    expect(windows.map((w) => w.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    for (const w of windows) expect(w.resetMs).toBeGreaterThan(0);
    for (const w of windows) expect(w.resetMs).toBeLessThanOrEqual(60_000);
    // Later increments never stretch the window: what is left only falls.
    await look.pexpire(`${stores.prefix}kv:rate`, 30_000);
    const later = await a.incrementWindow('rate', 60_000, 0);
    expect(later.count).toBe(40);
    expect(later.resetMs).toBeLessThanOrEqual(30_000);
    expect(await look.pttl(`${stores.prefix}kv:rate`)).toBeLessThanOrEqual(30_000);
    // A counter left without a TTL gets the window's; one that expired starts again from the next increment.
    await look.set(`${stores.prefix}kv:plain`, '5');
    expect((await b.incrementWindow('plain', 60_000)).count).toBe(6);
    expect(await look.pttl(`${stores.prefix}kv:plain`)).toBeGreaterThan(30_000);
    await look.del(`${stores.prefix}kv:rate`);
    const fresh = await a.incrementWindow('rate', 60_000, 3);
    expect(fresh.count).toBe(3);
    expect(fresh.resetMs).toBeGreaterThan(59_000);
    expect(fresh.resetMs).toBeLessThanOrEqual(60_000);
    // A key holding anything but a whole count starts a window afresh, as in memory.
    for (const held of [1.5, 'seven', { n: 1 }]) {
      await a.set('odd', held, { ttlMs: 600_000 });
      const window = await b.incrementWindow('odd', 1_000);
      expect(window.count).toBe(1);
      expect(window.resetMs).toBeLessThanOrEqual(1_000);
    }
  });

  it('refuses a window or a step that is not a count, and writes nothing', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    for (const [windowMs, by] of [
      [Number.NaN, 1],
      [Number.POSITIVE_INFINITY, 1],
      [0, 1],
      [1_000, 0.5],
      [1_000, -1],
      [1_000, 1e21],
    ] as const) {
      await expect(store.incrementWindow('rate', windowMs, by)).rejects.toThrow(RangeError);
      expect(await look.exists(`${stores.prefix}kv:rate`)).toBe(0);
    }
  });

  it('increments by fractions and negatives, and counts a non-number as zero', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    expect(await store.increment('f', 0.5)).toBe(0.5);
    expect(await store.increment('f', 1)).toBe(1.5);
    expect(await store.increment('n', -3)).toBe(-3);
    await store.set('word', 'hello');
    expect(await store.increment('word', 2)).toBe(2);
    expect(await store.increment('fresh')).toBe(1);
  });

  it('refuses a value with no JSON form, with INVALID_VALUE', async () => {
    stores = new StoreFactory(redis);
    const { store } = stores.open();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    for (const bad of [undefined, () => 1, 10n, circular]) {
      const error = await store.set('bad', bad).catch((e: unknown) => e);
      expect(SluiceError.is(error) && error.code).toBe(RedisStoreErrorCode.INVALID_VALUE);
    }
    await look.set(`${stores.prefix}kv:foreign`, 'not json {');
    const error = await store.get('foreign').catch((e: unknown) => e);
    expect(SluiceError.is(error) && error.code).toBe(RedisStoreErrorCode.INVALID_VALUE);
  });

  it('round-trips any JSON value under any key, without one key touching another', async () => {
    stores = new StoreFactory(redis);
    const a = stores.open().store;
    const b = stores.open().store;
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string({ maxLength: 10 }),
        fc.jsonValue(),
        async (key, other, value) => {
          fc.pre(key !== other);
          await b.set(other, 'sentinel');
          await a.set(key, value);
          expect(await b.get(key)).toEqual(JSON.parse(JSON.stringify(value)));
          expect(await a.get(other)).toBe('sentinel');
        },
      ),
      { numRuns: 150 },
    );
  });
});
