// Replicas whose clocks disagree: three `sluice serve` replicas on one redis-server, replica b's
// wall clock 15 s ahead of a's and c's 15 s behind (a preload shifts each one's Date; timers and
// Redis keep real time, as on machines whose clocks drifted). What one replica writes with its clock
// and another reads with its own must not let a caller past a limit or an approval run twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@sluice/core';
import { fleetAvailable, fleetClient, refusalCode, startFleet, textOf } from './harness.js';
import type { Fleet, FleetClient } from './harness.js';

const SKEW_MS = 15_000;
const RATE = { calls: 2, perMs: 5_000 };
const APPROVAL_TIMEOUT_MS = 3_000;

describe.skipIf(!fleetAvailable())('a fleet whose replicas disagree on the time', () => {
  let fleet: Fleet;
  const clients: FleetClient[] = [];

  beforeAll(async () => {
    fleet = await startFleet({
      clockSkewMs: { b: SKEW_MS, c: -SKEW_MS },
      guarded: { up_whoami: { maxActive: 100, maxQueue: 0, rate: RATE } },
      approvalTimeoutMs: APPROVAL_TIMEOUT_MS,
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await (fleet as Fleet | undefined)?.close();
  }, 30_000);

  async function client(url: URL, manualInput = false): Promise<FleetClient> {
    const made = await fleetClient(url, '2026-07-28', { manualInput });
    clients.push(made);
    return made;
  }

  it('admits a rate-limited tool`s calls per window once for the fleet, not once per replica clock', async () => {
    const direct = await Promise.all(fleet.replicas.map((r) => client(r.url)));
    const started = performance.now();
    // Five calls on each replica, all inside less than one window of real time.
    const results = await Promise.all(
      direct.map(async (c) => {
        const mine: CallToolResult[] = [];
        for (let i = 0; i < 5; i++) mine.push(await c.call('up_whoami'));
        return mine;
      }),
    );
    // The windows the calls can have touched, one fleet-wide window at a time (at most two on a quick machine).
    const windows = Math.floor((performance.now() - started) / RATE.perMs) + 2;
    const all = results.flat();
    const admitted = all.filter((r) => !r.isError);
    const refused = all.filter((r) => refusalCode(r) === 'RATE_LIMITED');
    expect(admitted.length + refused.length).toBe(15);
    // A fixed window admits its calls once per window, wherever they land. With windows numbered by each
    // replica's clock, a, b and c each counted windows of their own.
    expect(admitted.length).toBeLessThanOrEqual(windows * RATE.calls);
    expect(admitted.length).toBeGreaterThanOrEqual(RATE.calls);
    for (const r of refused) {
      const retryAfterMs = (r._meta?.['dev.sluice/error'] as { retryAfterMs?: number } | undefined)?.retryAfterMs;
      expect(retryAfterMs).toBeGreaterThan(0);
      expect(retryAfterMs).toBeLessThanOrEqual(RATE.perMs);
    }
  }, 60_000);

  it('refuses a spent 2026-07-28 approval on a replica whose clock lags the one that spent it, until it expires there', async () => {
    const ahead = await client(fleet.replica('b').url, true);
    const behind = await client(fleet.replica('a').url, true);
    const raw = async (c: FleetClient, params: Record<string, unknown>): Promise<Record<string, unknown>> =>
      await c.client.callTool(params as never, { allowInputRequired: true });
    const args = { env: 'prod' };
    const first = await raw(ahead, { name: 'up_deploy', arguments: args });
    expect(first.resultType).toBe('input_required');
    const retry = {
      name: 'up_deploy',
      arguments: args,
      inputResponses: { sluice_approval: { action: 'accept', content: { approve: true } } },
      requestState: first.requestState,
    };
    expect(textOf((await raw(ahead, retry)) as unknown as CallToolResult)).toBe('deployed to prod by b');
    // Replica b sealed the state to expire APPROVAL_TIMEOUT_MS after its own now, 15 s ahead of a's: replica a
    // takes it for live for some 18 s. The state is replayed on a until a says it expired; every replay
    // meanwhile must find it spent, however long b thought it would live.
    const replays: string[] = [];
    for (;;) {
      const replay = (await raw(behind, retry)) as unknown as CallToolResult;
      const code = refusalCode(replay);
      replays.push(code === undefined ? textOf(replay) : `${code}: ${textOf(replay)}`);
      if (code !== 'APPROVAL_INVALID' || !textOf(replay).includes('already used')) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(replays.at(-1)).toMatch(/^APPROVAL_TIMEOUT/);
    expect(replays.filter((r) => r.startsWith('deployed'))).toEqual([]);
    // It was refused as spent for longer than the state's own lifetime and its former slack (about 6 s).
    expect(replays.length).toBeGreaterThan((2 * APPROVAL_TIMEOUT_MS) / 250);
  }, 60_000);
});
