// A fleet of three replicas behind HAProxy (round-robin on every request, no stick rules) under
// steady load from both protocol versions, while replicas die and restart. SLUICE_FLEET_CHAOS_MS sets
// how long the killing goes on: 12 s by default, a minute for the full soak (SLUICE_FLEET_CHAOS_MS=60000).
import { afterEach, describe, expect, it } from 'vitest';
import { fleetAvailable, fleetClient, sleep, startFleet, textOf, until } from './harness.js';
import type { Fleet, FleetClient } from './harness.js';

const CHAOS_MS = Number(process.env.SLUICE_FLEET_CHAOS_MS ?? 12_000);
const KILL_EVERY_MS = 3_000;
/**
 * How long each call of the load works at the upstream. Six clients each keep one call in flight, so every
 * restart and every kill lands on calls that are running; longer work means fewer calls per second, which keeps
 * the fleet's CPU for the suite's other files without leaving a replica idle when it stops.
 */
const WORK_MS = 100;

interface Outcome {
  readonly tag: string;
  readonly era: string;
  readonly start: number;
  readonly end: number;
  readonly ok: boolean;
  readonly error?: string;
}

interface Stop {
  readonly replica: string;
  /** From the signal to the replica serving again. */
  readonly from: number;
  readonly to: number;
}

/** Calls `up_work` (which reports to the gate under a tag of its own) in a loop until `running()` is false. */
async function load(client: FleetClient, era: string, prefix: string, running: () => boolean, out: Outcome[]) {
  for (let i = 0; running(); i++) {
    const tag = `${prefix}-${i}`;
    const start = Date.now();
    try {
      const result = await client.call('up_work', { tag });
      const ok = !result.isError && textOf(result).startsWith(`${tag} by `);
      out.push({ tag, era, start, end: Date.now(), ok, ...(ok ? {} : { error: JSON.stringify(result) }) });
    } catch (error) {
      out.push({ tag, era, start, end: Date.now(), ok: false, error: String(error) });
    }
  }
}

/** The sum of a metric's samples in a Prometheus text page. */
function sample(page: string, name: string): number {
  let total = 0;
  for (const line of page.split('\n'))
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) total += Number(line.split(' ').at(-1));
  return total;
}

async function heapOf(url: URL): Promise<number> {
  const page = await (await fetch(new URL('/metrics', url))).text();
  return sample(page, 'nodejs_heap_size_used_bytes');
}

describe.skipIf(!fleetAvailable())('a fleet without sticky sessions, while replicas die and restart', () => {
  let fleet: Fleet | undefined;
  const clients: FleetClient[] = [];

  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await fleet?.close();
    fleet = undefined;
  }, 60_000);

  async function loaders(f: Fleet): Promise<FleetClient[]> {
    const made = await Promise.all(
      ['2025-11-25', '2025-11-25', '2025-11-25', '2026-07-28', '2026-07-28', '2026-07-28'].map((era) =>
        fleetClient(f.lb.url, era as '2025-11-25' | '2026-07-28'),
      ),
    );
    clients.push(...made);
    return made;
  }

  /** Failed calls that were not running on a replica while it stopped: those must be none. */
  function unexplained(f: Fleet, outcomes: Outcome[], stops: Stop[]): Outcome[] {
    return outcomes.filter((o) => {
      if (o.ok) return false;
      const arrival = f.gate.arrivals.find((a) => a.tag === o.tag);
      return !stops.some(
        (s) => o.start <= s.to && o.end >= s.from && (arrival === undefined || arrival.replica === s.replica),
      );
    });
  }

  function ranTwice(f: Fleet): string[] {
    const seen = new Map<string, number>();
    for (const a of f.gate.arrivals) seen.set(a.tag, (seen.get(a.tag) ?? 0) + 1);
    return [...seen].filter(([, n]) => n > 1).map(([tag]) => tag);
  }

  it(
    `loses only the calls in flight on a SIGKILLed replica, runs none twice, re-initializes no session (${CHAOS_MS} ms of kills)`,
    async () => {
      fleet = await startFleet({ leaseMs: 2_000 });
      const f = fleet;
      f.gate.open('work', WORK_MS);
      const made = await loaders(f);
      const outcomes: Outcome[] = [];
      let running = true;
      const loops = made.map((c, i) => load(c, i < 3 ? '2025-11-25' : '2026-07-28', `c${i}`, () => running, outcomes));
      // Warm up, then note what memory looks like before the kills.
      await until(() => outcomes.length >= 60, 'warm-up calls');
      const heapBefore = await heapOf(f.replica('a').url);
      const redisBefore = Number(/used_memory:(\d+)/.exec(await f.redis.client.info('memory'))![1]);

      const stops: Stop[] = [];
      const victims = ['b', 'c'];
      const end = Date.now() + CHAOS_MS;
      for (let k = 0; Date.now() < end; k++) {
        await sleep(KILL_EVERY_MS);
        const name = victims[k % victims.length]!;
        const from = Date.now();
        await f.restart(name, 'kill');
        stops.push({ replica: name, from, to: Date.now() });
      }
      // Load goes on until every replica serves again, then stops.
      await until(
        () => outcomes.filter((o) => o.start > stops.at(-1)!.to && o.ok).length >= 30,
        'calls after the last restart',
      );
      running = false;
      await Promise.all(loops);

      expect(unexplained(f, outcomes, stops)).toEqual([]);
      expect(ranTwice(f)).toEqual([]);
      for (const client of made.slice(0, 3))
        expect(client.requests.filter((r) => r.body.includes('"method":"initialize"'))).toHaveLength(1);
      const sessions = await f.redis.client.keys(`${f.keyPrefix}kv:mcp-session:*`);
      expect(sessions).toHaveLength(3);
      expect(outcomes.filter((o) => o.ok).length).toBeGreaterThan(100);
      // Flat memory: the replica that never died, and Redis. The load's garbage is still on the heap until V8
      // collects it, which no test can force in another process: wait for that (bounded), then assert.
      let heapAfter = await heapOf(f.replica('a').url);
      await until(
        async () => (heapAfter = await heapOf(f.replica('a').url)) < heapBefore * 1.5,
        'the garbage of the load collected',
      ).catch(() => undefined);
      const redisAfter = Number(/used_memory:(\d+)/.exec(await f.redis.client.info('memory'))![1]);
      process.stderr.write(
        `chaos: ${outcomes.length} calls, ${outcomes.filter((o) => !o.ok).length} lost in flight, ${stops.length} kills; ` +
          `heap of a ${heapBefore} -> ${heapAfter}, redis ${redisBefore} -> ${redisAfter}\n`,
      );
      expect(heapAfter).toBeLessThan(heapBefore * 1.5);
      expect(redisAfter).toBeLessThan(redisBefore * 1.5);
    },
    CHAOS_MS + 180_000,
  );

  it('restarts every replica in turn (SIGTERM, drain, start) under load with no failed call', async () => {
    // The replicas stay ready-looking for no longer than HAProxy needs to see /readyz fail (1 s x 3).
    fleet = await startFleet({ drainDelayMs: 4_000 });
    const f = fleet;
    f.gate.open('work', WORK_MS);
    const made = await loaders(f);
    const outcomes: Outcome[] = [];
    let running = true;
    const loops = made.map((c, i) => load(c, i < 3 ? '2025-11-25' : '2026-07-28', `r${i}`, () => running, outcomes));
    await until(() => outcomes.length >= 30, 'warm-up calls');
    for (const name of ['a', 'b', 'c']) {
      await f.restart(name, 'stop');
      // HAProxy takes it back after two good checks; wait until it serves calls again.
      await until(
        () => f.gate.arrivals.some((a) => a.replica === name && a.at > Date.now() - 1_000),
        `${name} serving`,
        30_000,
      );
    }
    running = false;
    await Promise.all(loops);
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(ranTwice(f)).toEqual([]);
    for (const client of made.slice(0, 3))
      expect(client.requests.filter((r) => r.body.includes('"method":"initialize"'))).toHaveLength(1);
  }, 240_000);
});
