// The fleet's 2025-11-25 session index in Redis: count and memory bounds over every replica, eviction
// order (unfinished handshakes, then the least recently used), expiry, and a property over any sequence.
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startRedis } from './helpers/redis-server.js';
import { StoreFactory } from './helpers/stores.js';

const redis = await startRedis();
const look = redis.client();
let stores: StoreFactory | undefined;

afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  await stores?.closeAll();
});

const LIMITS = { maxSessions: 3, maxMemoryBytes: 1_000, idleMs: 60_000, handshakeMs: 60_000 };

function replicas() {
  stores = new StoreFactory(redis);
  const base = `${stores.prefix}sessions:{index}`;
  return {
    a: stores.open().store.sessions,
    b: stores.open().store.sessions,
    counted: async () => new Set(await look.zrange(`${base}:used`, 0, -1)),
    memory: async () => Number((await look.get(`${base}:memory`)) ?? 0),
    score: async (id: string) => Number(await look.zscore(`${base}:used`, id)),
    bytes: async () => Object.values(await look.hgetall(`${base}:bytes`)).reduce((sum, b) => sum + Number(b), 0),
  };
}

describe('the session index', () => {
  it('holds the count bound over two replicas, evicting unfinished handshakes first, then the least recently used', async () => {
    const { a, b, counted, score } = replicas();
    expect(await a.admit('s1', 10, LIMITS)).toEqual({ admitted: true, evicted: [] });
    expect(await b.admit('s2', 10, LIMITS)).toEqual({ admitted: true, evicted: [] });
    expect(await a.admit('s3', 10, LIMITS)).toEqual({ admitted: true, evicted: [] });
    // s1 and s3 finished their handshakes; s2 never did, so it goes first although s1 is older.
    expect(await b.touch('s1', true)).toBe(true);
    expect(await a.touch('s3', true)).toBe(true);
    expect(await b.admit('s4', 10, LIMITS)).toEqual({ admitted: true, evicted: ['s2'] });
    await a.touch('s4', true);
    // Then the least recently used: s1 was used again (in a later millisecond of Redis's clock), so s3 goes.
    while ((await score('s1')) <= (await score('s3'))) await b.touch('s1', true);
    expect(await a.admit('s5', 10, LIMITS)).toEqual({ admitted: true, evicted: ['s3'] });
    expect(await counted()).toEqual(new Set(['s1', 's4', 's5']));
    // An evicted session is not brought back by a late touch.
    expect(await b.touch('s3', true)).toBe(false);
    expect(await counted()).toEqual(new Set(['s1', 's4', 's5']));
  });

  it('holds the memory bound, and refuses a session that alone exceeds it', async () => {
    const { a, b, counted, memory } = replicas();
    await a.admit('big1', 400, LIMITS);
    await b.admit('big2', 400, LIMITS);
    expect(await a.admit('big3', 400, LIMITS)).toEqual({ admitted: true, evicted: ['big1'] });
    expect(await memory()).toBe(800);
    expect(await b.admit('huge', 1_001, LIMITS)).toEqual({ admitted: false, evicted: [] });
    expect(await counted()).toEqual(new Set(['big2', 'big3']));
    await a.remove('big2');
    expect(await memory()).toBe(400);
  });

  it('drops sessions past their idle or handshake time when the next one is admitted', async () => {
    const { a, b, counted } = replicas();
    const short = { ...LIMITS, idleMs: 50, handshakeMs: 50 };
    await a.admit('old', 10, short);
    await b.touch('old', true);
    await a.admit('unfinished', 10, short);
    // Each admission first drops what expired: once both have, only the newest is left.
    for (let tries = 0; (await counted()).size > 1 && tries < 1_000; tries++) await b.admit('new', 10, short);
    expect(await counted()).toEqual(new Set(['new']));
  });

  it('never holds more than the bounds, and its memory sum matches, whatever the replicas do', async () => {
    const { a, b, counted, memory, bytes } = replicas();
    const id = fc.constantFrom('s1', 's2', 's3', 's4', 's5', 's6');
    const step = fc.oneof(
      fc.record({ op: fc.constant('admit' as const), id, bytes: fc.integer({ min: 1, max: 600 }), on: fc.boolean() }),
      fc.record({ op: fc.constant('touch' as const), id, ready: fc.boolean(), on: fc.boolean() }),
      fc.record({ op: fc.constant('remove' as const), id, on: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        for (const s of steps) {
          const index = s.on ? a : b;
          if (s.op === 'admit') await index.admit(s.id, s.bytes, LIMITS);
          else if (s.op === 'touch') await index.touch(s.id, s.ready);
          else await index.remove(s.id);
          expect((await counted()).size).toBeLessThanOrEqual(LIMITS.maxSessions);
          expect(await memory()).toBeLessThanOrEqual(LIMITS.maxMemoryBytes);
          expect(await memory()).toBe(await bytes());
        }
        for (const left of await counted()) await a.remove(left);
      }),
      { numRuns: 60 },
    );
  });
});
