// 2025-11-25 sessions in a fleet of three replicas behind HAProxy: what a session's request costs in
// Redis commands and latency, round-robin on every request (sessions in Redis) against the sticky
// fleet that pins each session to one replica. Needs redis-server, haproxy and `pnpm build`.
// BENCH_QUICK=1 for a short run.
import { printTable, ratio, writeResult } from './lib.js';
import { fleetClient, fleetMissing, sleep, startFleet, textOf } from '../packages/gateway/test/fleet/harness.js';
import type { Fleet } from '../packages/gateway/test/fleet/harness.js';

const missing = fleetMissing();
if (missing.length > 0) {
  process.stderr.write(`fleet-sessions.bench: skipped, missing ${missing.join(', ')}\n`);
  process.exit(0);
}

const quick = process.env.BENCH_QUICK === '1';
const CALLS = quick ? 100 : 600;
const WARMUP = 30;
const SESSIONS = quick ? 10 : 30;

/** Redis commands run so far, by command. */
async function commands(fleet: Fleet): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const line of (await fleet.redis.client.info('commandstats')).split('\n')) {
    const match = /^cmdstat_([a-z|]+):calls=(\d+)/.exec(line);
    if (match) counts.set(match[1]!, Number(match[2]));
  }
  return counts;
}

const delta = (after: Map<string, number>, before: Map<string, number>) =>
  new Map([...after].map(([name, n]) => [name, n - (before.get(name) ?? 0)]));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

async function measure(sticky: boolean): Promise<Record<string, number | string>> {
  const fleet = await startFleet({ sticky });
  try {
    const client = await fleetClient(fleet.lb.url, '2025-11-25');
    for (let i = 0; i < WARMUP; i++) await client.call('up_whoami');
    const latencies: number[] = [];
    const t0 = Date.now();
    const before = await commands(fleet);
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      const result = await client.call('up_whoami');
      if (result.isError) throw new Error(`whoami failed: ${textOf(result)}`);
      latencies.push(performance.now() - start);
    }
    const during = delta(await commands(fleet), before);
    // What the fleet sends Redis anyway (the risk ledger's sync), over as long with no calls.
    const idleFrom = await commands(fleet);
    const idleMs = Date.now() - t0;
    await sleep(idleMs);
    const idle = delta(await commands(fleet), idleFrom);
    await client.close();
    // New sessions: what opening one costs (initialize, initialized, the GET stream), less the idle traffic.
    const openFrom = await commands(fleet);
    const o0 = Date.now();
    const opened: Awaited<ReturnType<typeof fleetClient>>[] = [];
    for (let i = 0; i < SESSIONS; i++) opened.push(await fleetClient(fleet.lb.url, '2025-11-25'));
    const opening = delta(await commands(fleet), openFrom);
    const openMs = Date.now() - o0;
    await Promise.all(opened.map((c) => c.close()));
    const perOpen = (name: string) =>
      Math.max(0, (opening.get(name) ?? 0) - ((idle.get(name) ?? 0) * openMs) / Math.max(1, idleMs)) / SESSIONS;
    const per = (name: string) => Math.max(0, (during.get(name) ?? 0) - (idle.get(name) ?? 0)) / CALLS;
    latencies.sort((a, b) => a - b);
    return {
      fleet: sticky ? 'sticky (stick table on mcp-session-id)' : 'round-robin, sessions in Redis',
      'GET per call': per('get'),
      'SET per call': per('set'),
      'PUBLISH per call': per('publish'),
      // The session index's touches (scripts), at most one a second per session and replica.
      'EVALSHA per call': per('evalsha'),
      'replicas serving': new Set(client.servedBy).size,
      // The session index's admit (one script call), the record's writes, per new session.
      'EVALSHA per new session': Number(perOpen('evalsha').toFixed(2)),
      'SET per new session': Number(perOpen('set').toFixed(2)),
      'p50 ms': Number(percentile(latencies, 50).toFixed(2)),
      'p99 ms': Number(percentile(latencies, 99).toFixed(2)),
    };
  } finally {
    await fleet.close();
  }
}

const rows = [await measure(true), await measure(false)];
printTable(`one 2025-11-25 session, ${CALLS} sequential up_whoami calls through HAProxy, 3 replicas`, rows);
printTable('round-robin / sticky', [{ 'p50 ratio': ratio(Number(rows[1]!['p50 ms']), Number(rows[0]!['p50 ms'])) }]);
process.stdout.write(`\nresults: ${writeResult('fleet-sessions', { quick, calls: CALLS, rows })}\n`);
