import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryStore } from '@sluice/core';
import type { Store } from '@sluice/core';
import { errorOf, textOf } from '@sluice/testing';
import { FingerprintLedger, RiskErrorCode, RiskEvent } from '@sluice/plugin-risk';
import type { RiskOptions } from '@sluice/plugin-risk';
import { addTool, official, riskKit, upstream } from './helpers.js';
import type { RiskKit } from './helpers.js';
import '@sluice/upstream';

/** The in-memory store, counting reads, under another kind: what replicas sharing Redis look like to the plugin. */
class CountingStore extends MemoryStore {
  reads = 0;
  constructor(kind: string) {
    super();
    Object.defineProperty(this, 'kind', { value: kind });
  }
  override get<T = unknown>(key: string): Promise<T | undefined> {
    this.reads++;
    return super.get<T>(key);
  }
}

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

const options = (syncMs: number): RiskOptions => ({
  servers: { dict: official },
  ledger: { persist: 'store', syncMs },
});

async function replica(store: Store, syncMs = 0): Promise<RiskKit> {
  const k = await riskKit(options(syncMs), { store, fakeClock: true });
  open.push(k);
  return k;
}

describe('a ledger shared by replicas (store kind other than memory)', () => {
  it('enforces on every replica a mismatch one of them saw', async () => {
    const store = new CountingStore('shared');
    const a = await replica(store);
    const b = await replica(store);
    await b.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream() } });
    await a.server.import({ name: 'dict', connection: { type: 'in-process', server: changed() } });
    expect(a.logs.events(RiskEvent.HASH_LEDGER_MISMATCH)).toHaveLength(1);
    // B never saw the new definition; the shared ledger says it awaits re-review.
    expect(errorOf(await b.call('lookup', { word: 'x' }))?.code).toBe(RiskErrorCode.TOOL_AWAITING_REREVIEW);
    expect(await b.names()).toEqual([]);
    expect(b.logs.events(RiskEvent.COMPOSITION_LIFECYCLE).at(-1)).toMatchObject({
      tool: 'lookup',
      phase: 'held',
      reason: 'seen on another replica',
    });
  });

  it('releases on every replica an approval made on one, and holds on every replica a revocation', async () => {
    const store = new CountingStore('shared');
    const a = await replica(store);
    const b = await replica(store);
    await b.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream() } });
    await a.server.import({ name: 'dict', connection: { type: 'in-process', server: changed() } });
    expect(errorOf(await b.call('lookup', { word: 'x' }))?.code).toBe(RiskErrorCode.TOOL_AWAITING_REREVIEW);
    await a.plugin.approveRereview('dict', 'lookup');
    expect(textOf(await b.call('lookup', { word: 'x' }))).toBe('x: a word');
    await a.plugin.revoke('dict', 'lookup');
    expect(errorOf(await b.call('lookup', { word: 'x' }))?.code).toBe(RiskErrorCode.TOOL_REVOKED);
    expect(errorOf(await a.call('lookup', { word: 'x' }))?.code).toBe(RiskErrorCode.TOOL_REVOKED);
  });

  it("writes an operator's decision seen on another replica outside the upstream's share of lines", async () => {
    const store = new CountingStore('shared');
    const a = await replica(store);
    const b = await riskKit(
      { ...options(0), logs: { perUpstream: { maxLines: 1, windowMs: 60_000 } } },
      { store, fakeClock: true },
    );
    open.push(b);
    await b.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream() } });
    await a.server.import({ name: 'dict', connection: { type: 'in-process', server: changed() } });
    expect(errorOf(await b.call('lookup', { word: 'x' }))?.code).toBe(RiskErrorCode.TOOL_AWAITING_REREVIEW);
    // B's client, which may see lookup, hears each decision B applies from the shared ledger.
    let heard = 0;
    b.client.setNotificationHandler('notifications/tools/list_changed', () => {
      heard++;
    });
    // B's share of lines about dict is spent by now (its import and the hold it saw).
    await a.plugin.approveRereview('dict', 'lookup');
    expect(textOf(await b.call('lookup', { word: 'x' }))).toBe('x: a word');
    await expect.poll(() => heard).toBe(1);
    await a.plugin.revoke('dict', 'lookup');
    expect(errorOf(await b.call('lookup', { word: 'x' }))?.code).toBe(RiskErrorCode.TOOL_REVOKED);
    await expect.poll(() => heard).toBe(2);
    const decisions = b.logs
      .events(RiskEvent.COMPOSITION_LIFECYCLE)
      .filter((line) => line.phase === 'approved' || line.phase === 'revoked')
      .map((line) => [line.phase, line.reason]);
    expect(decisions).toEqual([
      ['approved', 'approved on another replica'],
      ['revoked', 'seen on another replica'],
    ]);
  });

  it('never writes a stale record back over another replica’s revocation', async () => {
    const store = new CountingStore('shared');
    const a = await replica(store);
    const b = await replica(store);
    const withTwo = () => {
      const up = upstream();
      addTool(up, 'spell', 'Spells a word out letter by letter, slowly.');
      return up;
    };
    await b.server.import({ name: 'dict', connection: { type: 'in-process', server: withTwo() } });
    await a.server.import({ name: 'dict', connection: { type: 'in-process', server: withTwo() } });
    await a.plugin.revoke('dict', 'lookup');
    // B still holds its own copy of the record from its import; its next write must start from the store's.
    await b.plugin.approveRereview('dict', 'spell');
    // What the store holds, read by a ledger with no memory of its own.
    expect((await new FingerprintLedger(store).entries('dict')).map((e) => [e.name, e.lifecycle])).toEqual([
      ['lookup', 'REVOKED'],
      ['spell', 'ACTIVE'],
    ]);
  });

  it('reads the shared version at most once per ledger.syncMs while calls arrive, so a change shows within that', async () => {
    const store = new CountingStore('shared');
    const a = await replica(store);
    const b = await replica(store, 1_000);
    await b.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream() } });
    await b.call('lookup', { word: 'x' });
    const before = store.reads;
    for (let i = 0; i < 20; i++) await b.call('lookup', { word: 'x' });
    expect(store.reads).toBe(before);
    await a.server.import({ name: 'dict', connection: { type: 'in-process', server: changed() } });
    b.clock?.advance(1_000);
    expect(errorOf(await b.call('lookup', { word: 'x' }))?.code).toBe(RiskErrorCode.TOOL_AWAITING_REREVIEW);
  });

  it('costs nothing per call with the in-memory store: no read at all', async () => {
    const store = new CountingStore('memory');
    const k = await replica(store);
    await k.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream() } });
    const before = store.reads;
    for (let i = 0; i < 20; i++) await k.call('lookup', { word: 'x' });
    expect(store.reads).toBe(before);
  });
});

/** The same upstream after a rug pull: `lookup` now says something else. */
function changed(): McpServer {
  const up = new McpServer({ name: 'impostor', version: '1.0.1' });
  up.registerTool(
    'lookup',
    {
      description: 'Looks up a word in the dictionary and returns its meaning, then keeps a copy of the question.',
      inputSchema: z.object({ word: z.string().describe('The word to look up') }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ word }) => ({ content: [{ type: 'text', text: `${word}: a changed word` }] }),
  );
  return up;
}
