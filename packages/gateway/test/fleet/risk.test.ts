// The risk plugin across three `sluice serve` replicas behind HAProxy, sharing one redis-server: a
// rug pull one replica saw holds the tool on all, an approval frees it on all, and a 2026-07-28
// approval answered on another replica works once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@sluice/core';
import { createServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { risk } from '@sluice/plugin-risk';
import { redisStore } from '@sluice/store-redis';
import { fleetAvailable, fleetClient, refusalCode, sleep, startFleet, textOf, until } from './harness.js';
import type { Fleet, FleetClient } from './harness.js';

const SYNC_MS = 500;

describe.skipIf(!fleetAvailable())('a fleet of three replicas behind HAProxy: risk', () => {
  let fleet: Fleet;
  const clients: FleetClient[] = [];

  beforeAll(async () => {
    fleet = await startFleet({ syncMs: SYNC_MS });
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

  it('holds on every replica within ledger.syncMs a rug pull one replica saw, and frees it on all once approved', async () => {
    const direct = Object.fromEntries(
      await Promise.all(fleet.replicas.map(async (r) => [r.name, await client(r.url)] as const)),
    ) as Record<string, FleetClient>;
    for (const name of ['a', 'b', 'c'])
      expect(textOf(await direct[name]!.call('up_lookup', { word: 'weir' }))).toBe(`weir: a word (${name})`);

    // Replica a's upstream redefines its tool; b's and c's never do.
    expect(textOf(await direct.a!.call('up_redefine'))).toBe('redefined');
    await until(
      async () => refusalCode(await direct.a!.call('up_lookup', { word: 'weir' })) === 'TOOL_AWAITING_REREVIEW',
      'replica a to hold the redefined tool',
    );
    await sleep(SYNC_MS);
    for (const name of ['b', 'c'])
      expect(refusalCode(await direct[name]!.call('up_lookup', { word: 'weir' }))).toBe('TOOL_AWAITING_REREVIEW');
    const lb = await client(fleet.lb.url);
    for (let i = 0; i < 3; i++)
      expect(refusalCode(await lb.call('up_lookup', { word: 'weir' }))).toBe('TOOL_AWAITING_REREVIEW');

    // An operator approves the new definition in code, from a process of its own on the same Redis.
    const store = redisStore({ url: fleet.redis.url }, { keyPrefix: fleet.keyPrefix });
    const guard = risk({ ledger: { syncMs: SYNC_MS } });
    const admin = createServer({
      name: 'fleet-admin',
      version: '1.0.0',
      store,
      plugins: [guard],
      logger: captureLogger().logger,
    });
    try {
      await guard.approveRereview('up', 'lookup');
    } finally {
      await admin.close();
      await store.close();
    }
    await sleep(SYNC_MS);
    for (const name of ['a', 'b', 'c'])
      expect(textOf(await direct[name]!.call('up_lookup', { word: 'weir' }))).toBe(`weir: a word (${name})`);
    const served = new Set<string>();
    for (let i = 0; i < 3; i++) served.add(/\((\w)\)$/.exec(textOf(await lb.call('up_lookup', { word: 'weir' })))![1]!);
    expect([...served].sort()).toEqual(['a', 'b', 'c']);
  }, 60_000);

  it('accepts a 2026-07-28 approval answered on another replica than the one that asked, and refuses its replay on a third', async () => {
    const lb = await client(fleet.lb.url, true);
    const raw = async (params: Record<string, unknown>): Promise<{ result: Record<string, unknown>; by: string }> => {
      const result = (await lb.client.callTool(params as never, { allowInputRequired: true })) as Record<
        string,
        unknown
      >;
      return { result, by: lb.servedBy.at(-1)! };
    };
    const args = { env: 'prod' };
    const first = await raw({ name: 'up_deploy', arguments: args });
    expect(first.result.resultType).toBe('input_required');
    const retry = {
      name: 'up_deploy',
      arguments: args,
      inputResponses: { sluice_approval: { action: 'accept', content: { approve: true } } },
      requestState: first.result.requestState,
    };
    const second = await raw(retry);
    expect(second.by).not.toBe(first.by);
    expect(textOf(second.result as unknown as CallToolResult)).toBe(`deployed to prod by ${second.by}`);
    const replay = await raw(retry);
    expect(new Set([first.by, second.by, replay.by]).size).toBe(3);
    expect(refusalCode(replay.result as unknown as CallToolResult)).toBe('APPROVAL_INVALID');
    expect(textOf(replay.result as unknown as CallToolResult)).toContain('already used');
  }, 60_000);
});
