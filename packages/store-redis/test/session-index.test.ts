// The fleet's 2025-11-25 session index in Redis: count and memory bounds over every replica, eviction
// order (unfinished handshakes, then the least recently used), expiry, each caller's share, and a
// property over any sequence.
import { createHash } from 'node:crypto';
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

/** How the index names a caller in its keys. */
const tag = (caller: string) => createHash('sha256').update(caller).digest('hex').slice(0, 32);

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
    /** Each caller's sessions (id -> bytes), read from the per-caller keys. */
    byCaller: async (callers: readonly string[]) => {
      const sizes = await look.hgetall(`${base}:bytes`);
      const held = new Map<string, Map<string, number>>();
      for (const caller of callers) {
        const ids = await look.zrange(`${base}:caller:${tag(caller)}`, 0, -1);
        held.set(caller, new Map(ids.map((id) => [id, Number(sizes[id])])));
      }
      return held;
    },
    callerBytes: async (caller: string) => Number((await look.hget(`${base}:caller-bytes`, tag(caller))) ?? 0),
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

  it("holds each caller to its share, evicting that caller's own least recently used, never another's", async () => {
    const { a, b, counted, score } = replicas();
    const shared = { ...LIMITS, maxSessions: 5, maxSessionsPerCaller: 2, maxMemoryBytesPerCaller: 1_000 };
    await a.admit('theirs', 10, shared, 'apiKey:other');
    await b.admit('h1', 10, shared, 'apiKey:hog');
    await a.admit('h2', 10, shared, 'apiKey:hog');
    // The hog's third session: its own oldest goes, though another caller's is older still.
    expect(await b.admit('h3', 10, shared, 'apiKey:hog')).toEqual({ admitted: true, evicted: ['h1'] });
    expect(await counted()).toEqual(new Set(['theirs', 'h2', 'h3']));
    // Its least recently used, not its oldest: h2 was used again, so h3 goes.
    await a.touch('h3', true);
    while ((await score('h2')) <= (await score('h3'))) await b.touch('h2', true);
    expect(await a.admit('h4', 10, shared, 'apiKey:hog')).toEqual({ admitted: true, evicted: ['h3'] });
    // A session that ends leaves its caller's count; a session without a caller has no share.
    await b.remove('h2');
    expect(await a.admit('h5', 10, shared, 'apiKey:hog')).toEqual({ admitted: true, evicted: [] });
    for (const id of ['anon1', 'anon2']) await b.admit(id, 10, shared);
    for (const id of ['anon1', 'theirs', 'h4', 'h5', 'anon2']) await a.touch(id, true);
    expect(await b.admit('anon3', 10, shared)).toEqual({ admitted: true, evicted: ['anon1'] });
    expect(await counted()).toEqual(new Set(['theirs', 'h4', 'h5', 'anon2', 'anon3']));
  });

  it("holds each caller's memory share, yet admits a caller's only session whatever its size", async () => {
    const { a, b, counted, callerBytes } = replicas();
    const shared = { ...LIMITS, maxSessions: 10, maxSessionsPerCaller: 10, maxMemoryBytesPerCaller: 500 };
    await a.admit('m1', 300, shared, 'oauth:hog');
    expect(await b.admit('m2', 300, shared, 'oauth:hog')).toEqual({ admitted: true, evicted: ['m1'] });
    expect(await callerBytes('oauth:hog')).toBe(300);
    await a.remove('m2');
    expect(await callerBytes('oauth:hog')).toBe(0);
    expect(await b.admit('big', 700, shared, 'oauth:hog')).toEqual({ admitted: true, evicted: [] });
    expect(await counted()).toEqual(new Set(['big']));
  });

  it('never holds more than the bounds, and its memory sum matches, whatever the replicas do', async () => {
    const { a, b, counted, memory, bytes, byCaller, callerBytes } = replicas();
    const limits = { ...LIMITS, maxSessionsPerCaller: 2, maxMemoryBytesPerCaller: 500 };
    const callers = ['x', 'y'];
    const id = fc.constantFrom('s1', 's2', 's3', 's4', 's5', 's6');
    const caller = fc.constantFrom('x', 'y', undefined);
    const step = fc.oneof(
      fc.record({
        op: fc.constant('admit' as const),
        id,
        bytes: fc.integer({ min: 1, max: 600 }),
        on: fc.boolean(),
        caller,
      }),
      fc.record({ op: fc.constant('touch' as const), id, ready: fc.boolean(), on: fc.boolean() }),
      fc.record({ op: fc.constant('remove' as const), id, on: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 30 }), async (steps) => {
        for (const s of steps) {
          const index = s.on ? a : b;
          if (s.op === 'admit') await index.admit(s.id, s.bytes, limits, s.caller);
          else if (s.op === 'touch') await index.touch(s.id, s.ready);
          else await index.remove(s.id);
          const all = await counted();
          expect(all.size).toBeLessThanOrEqual(LIMITS.maxSessions);
          expect(await memory()).toBeLessThanOrEqual(LIMITS.maxMemoryBytes);
          expect(await memory()).toBe(await bytes());
          for (const [who, held] of await byCaller(callers)) {
            const sum = [...held.values()].reduce((total, n) => total + n, 0);
            expect(held.size).toBeLessThanOrEqual(limits.maxSessionsPerCaller);
            // Past the memory share only with one session, which a caller always gets.
            if (held.size > 1) expect(sum).toBeLessThanOrEqual(limits.maxMemoryBytesPerCaller);
            expect(await callerBytes(who)).toBe(sum);
            for (const one of held.keys()) expect(all.has(one)).toBe(true);
          }
        }
        for (const left of await counted()) await a.remove(left);
      }),
      { numRuns: 60 },
    );
  });
});
