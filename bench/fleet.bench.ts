// The fleet: 1, 2 and 3 `sluice serve` replicas (the built CLI) behind HAProxy, sharing one
// redis-server, calling a tool guarded by one shared limit; and what the Redis round trips add to
// one call (the same replica on the in-memory store, paired in the same run).
// Needs redis-server, haproxy and `pnpm build`. BENCH_QUICK=1 for a short run.
import { paired, printTable, ratio, writeResult } from './lib.js';
import { fleetClient, fleetMissing, startFleet, textOf } from '../packages/gateway/test/fleet/harness.js';
import type { Fleet, FleetClient } from '../packages/gateway/test/fleet/harness.js';

const missing = fleetMissing();
if (missing.length > 0) {
  process.stderr.write(`fleet.bench: skipped, missing ${missing.join(', ')}\n`);
  process.exit(0);
}

const quick = process.env.BENCH_QUICK === '1';
const CLIENTS = 32;
const SECONDS = quick ? 2 : 6;
const SHARED = { up_whoami: { maxActive: 16, maxQueue: 10_000 } };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** CLIENTS stateless clients through the load balancer, each calling in a loop for SECONDS. */
async function throughput(
  fleet: Fleet,
): Promise<{ callsPerSec: number; p50Ms: number; p99Ms: number; replicas: string[] }> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => fleetClient(fleet.lb.url, '2026-07-28')));
  const warmUntil = Date.now() + 1_000;
  const stopAt = warmUntil + SECONDS * 1_000;
  const latencies: number[] = [];
  const served = new Set<string>();
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < stopAt) {
        const t0 = performance.now();
        const result = await client.call('up_whoami');
        if (result.isError) throw new Error(`whoami failed: ${textOf(result)}`);
        if (Date.now() > warmUntil) {
          latencies.push(performance.now() - t0);
          served.add(textOf(result));
        }
      }
    }),
  );
  await Promise.all(clients.map((c) => c.close()));
  latencies.sort((a, b) => a - b);
  return {
    callsPerSec: Math.round(latencies.length / SECONDS),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    replicas: [...served].sort(),
  };
}

const scale: Array<Record<string, string | number>> = [];
const results: Record<string, unknown> = {};
for (const replicas of [1, 2, 3]) {
  const fleet = await startFleet({ replicas, guarded: SHARED });
  try {
    const r = await throughput(fleet);
    results[`replicas${replicas}`] = r;
    scale.push({
      replicas,
      'calls/s': r.callsPerSec,
      'p50 ms': r.p50Ms,
      'p99 ms': r.p99Ms,
      'served by': r.replicas.join(' '),
    });
  } finally {
    await fleet.close();
  }
}
printTable(
  `up_whoami (shared limit maxActive 16) through HAProxy, ${CLIENTS} concurrent 2026-07-28 clients, ${SECONDS} s`,
  scale,
);

// Added latency per guarded call: one replica, one client, no load balancer; Redis vs memory store.
const onRedis = await startFleet({ replicas: 1, guarded: SHARED });
const inMemory = await startFleet({ replicas: 1, guarded: SHARED, store: 'memory' });
let direct: FleetClient[] = [];
try {
  direct = await Promise.all([
    fleetClient(onRedis.replicas[0]!.url, '2026-07-28'),
    fleetClient(inMemory.replicas[0]!.url, '2026-07-28'),
  ]);
  const call =
    (client: FleetClient, tool: string, args: Record<string, unknown> = {}) =>
    async () => {
      const result = await client.call(tool, args);
      if (result.isError) throw new Error(`${tool} failed: ${textOf(result)}`);
    };
  const settings = quick ? { warmup: 100, rounds: 4, perRound: 100 } : { warmup: 500, rounds: 10, perRound: 300 };
  const stats = await paired(
    [
      { name: 'guarded call, in-memory store', run: call(direct[1]!, 'up_whoami') },
      { name: 'guarded call, Redis store', run: call(direct[0]!, 'up_whoami') },
      { name: 'unguarded call, Redis store', run: call(direct[0]!, 'up_lookup', { word: 'weir' }) },
    ],
    settings,
  );
  printTable(
    'one client, one replica, directly (no load balancer)',
    stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'calls/s': Math.round(s.opsPerSec) })),
  );
  const [memory, redis] = stats as [(typeof stats)[0], (typeof stats)[0]];
  const added = {
    'Redis p50 - memory p50 (µs)': Math.round(redis.p50Us - memory.p50Us),
    'redis/memory p50': ratio(redis.p50Us, memory.p50Us),
  };
  printTable('added by the Redis store per guarded call', [added]);
  results.latency = { stats, added };
} finally {
  await Promise.all(direct.map((c) => c.close()));
  await onRedis.close();
  await inMemory.close();
}
const one = results.replicas1 as { callsPerSec: number };
const three = results.replicas3 as { callsPerSec: number };
printTable('scaling', [{ '3 replicas / 1 replica calls/s': ratio(three.callsPerSec, one.callsPerSec) }]);
process.stdout.write(`\nresults: ${writeResult('fleet', { quick, clients: CLIENTS, seconds: SECONDS, ...results })}\n`);
