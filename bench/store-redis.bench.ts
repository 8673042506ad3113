// The Redis store against the in-memory store, in one run: (1) sequential
// acquire+release of a semaphore slot (one round trip to acquire, one to
// release), (2) setIfAbsent and get, (3) throughput when 50 callers contend
// for 5 slots (queueing and pub/sub wake-ups). Starts its own redis-server.
// Run: cd bench && node --conditions=sluice:source --import tsx store-redis.bench.ts
//  (or: cd packages/core && npx tsx ../../bench/store-redis.bench.ts after a build)
import { pino } from 'pino';
import { MemoryStore } from '../packages/core/src/index.js';
import type { Semaphore, Store } from '../packages/core/src/index.js';
import { redisStore } from '../packages/store-redis/src/index.js';
import { startRedis } from '../packages/store-redis/test/helpers/redis-server.js';
import { paired, printTable, ratio, writeResult } from './lib.js';
import type { Stats } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const SLOTS = { maxActive: 5, maxQueue: 1_000 };

async function take(semaphore: Semaphore): Promise<void> {
  const permit = semaphore.tryAcquire();
  if (permit) {
    permit.release();
    return;
  }
  const admission = await semaphore.acquire();
  if (!admission.admitted) throw new Error('shed during the bench');
  admission.permit.release();
}

async function contended(store: Store, workers: number, total: number): Promise<number> {
  let left = total;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (left-- > 0) await take(store.semaphore('contended', SLOTS));
    }),
  );
  return total / (Number(process.hrtime.bigint() - started) / 1e9);
}

const redis = await startRedis();
const memory = new MemoryStore();
const shared = redisStore({ url: redis.url }, { keyPrefix: 'bench:', logger: pino({ level: 'silent' }) });
await shared.ready();

try {
  const rounds = { warmup: quick ? 200 : 2_000, rounds: quick ? 4 : 10, perRound: quick ? 200 : 1_000 };
  const slot = await paired(
    [
      { name: 'memory acquire+release', run: () => take(memory.semaphore('seq', SLOTS)) },
      { name: 'redis acquire+release', run: () => take(shared.semaphore('seq', SLOTS)) },
    ],
    rounds,
  );
  let n = 0;
  const values = await paired(
    [
      { name: 'memory setIfAbsent', run: () => memory.setIfAbsent(`nonce:${n++}`, true, { ttlMs: 60_000 }) },
      { name: 'redis setIfAbsent', run: () => shared.setIfAbsent(`nonce:${n++}`, true, { ttlMs: 60_000 }) },
      { name: 'memory get', run: () => memory.get('ledger') },
      { name: 'redis get', run: () => shared.get('ledger') },
    ],
    rounds,
  );
  const row = (s: Stats) => ({
    operation: s.name,
    'p50 µs': Math.round(s.p50Us * 10) / 10,
    'p99 µs': Math.round(s.p99Us * 10) / 10,
    'ops/s': Math.round(s.opsPerSec),
  });
  printTable('Sequential operations (one caller)', [...slot, ...values].map(row));

  const total = quick ? 2_000 : 20_000;
  const memoryRate = await contended(memory, 50, total);
  const redisRate = await contended(shared, 50, total);
  const contention = [
    { store: 'memory', 'acquire+release/s': Math.round(memoryRate) },
    { store: 'redis', 'acquire+release/s': Math.round(redisRate) },
  ];
  printTable('50 callers contending for 5 slots', contention);

  const redisSlot = slot[1]!;
  const memorySlot = slot[0]!;
  printTable('Redis / memory', [
    { measure: 'acquire+release p50', ratio: ratio(redisSlot.p50Us, memorySlot.p50Us) },
    { measure: 'contended throughput', ratio: ratio(redisRate, memoryRate) },
  ]);
  const file = writeResult('store-redis', {
    quick,
    sequential: [...slot, ...values],
    contended: { workers: 50, slots: 5, total, memoryRate, redisRate },
  });
  process.stdout.write(`\nwrote ${file}\n`);
} finally {
  await shared.close();
  await memory.close();
  await redis.close();
}
