// The audit log over the memory store: what an append writes, how retention
// trims, and that any single edit of a kept chain (fuzzed) fails verification.
import fc from 'fast-check';
import { CoreErrorCode, MemoryAudit, MemoryStore, SluiceError, createServer } from '@sluice/core';
import type { AuditEntry, AuditPage, AuthInfo, Store } from '@sluice/core';
import { FakeClock, captureLogger } from '@sluice/testing';
import { AuditChainCheck, AuditLog } from '@sluice/audit';
import { describe, expect, it } from 'vitest';

const clock = { now: () => 1_700_000_000_000 };

async function chain(count: number, maxEntries: number): Promise<{ log: AuditLog; records: MemoryAudit }> {
  const records = new MemoryAudit();
  const log = new AuditLog(records, clock, captureLogger().logger, { maxEntries });
  for (let i = 1; i <= count; i++) await log.append({ kind: 'approval.answered', tool: `t${i}`, by: 'ops' });
  return { log, records };
}

function verdict(page: AuditPage): boolean {
  const check = new AuditChainCheck();
  check.page(page);
  return check.finish(page.head).ok;
}

describe('the audit log', () => {
  it('is services.audit on a server, in the server store, with the retention given', async () => {
    const server = createServer({ name: 's', version: '1', audit: { maxEntries: 3 } });
    for (let i = 0; i < 5; i++) await server.services.audit.append({ kind: 'ledger.revoked', tool: `t${i}` });
    const page = await server.services.audit.read();
    expect(page.entries.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(page.anchor.seq).toBe(3);
    expect((await server.services.audit.verify()).ok).toBe(true);
    await server.close();
  });

  it('refuses a retention out of bounds when the server is created, naming the option', () => {
    const make = (maxEntries: number) => () => createServer({ name: 's', version: '1', audit: { maxEntries } });
    expect(make(0)).toThrow(/maxEntries/);
    expect(make(10_000_001)).toThrow(/maxEntries/);
    expect(make(1)).not.toThrow();
  });

  it('writes each entry with its number, time, the previous hash and its own', async () => {
    const { log } = await chain(2, 10);
    const [first, second] = (await log.read()).entries.map((e) => JSON.parse(e.text) as Record<string, unknown>);
    expect(first).toMatchObject({ seq: 1, at: clock.now(), kind: 'approval.answered', tool: 't1', by: 'ops' });
    expect(first?.prev).toBe('0'.repeat(64));
    expect(second?.prev).toBe(first?.hash);
  });

  it('refuses a malformed event with a coded error, and cuts long fields', async () => {
    const { log } = await chain(0, 10);
    const error: unknown = await log.append({ kind: 'nope' } as never).catch((e: unknown) => e);
    expect(SluiceError.is(error) && error.code).toBe(CoreErrorCode.INVALID_OPTIONS);
    const extra: unknown = await log.append({ kind: 'ledger.held', note: 'x' } as never).catch((e: unknown) => e);
    expect(SluiceError.is(extra)).toBe(true);
    const entry = await log.append({ kind: 'ledger.held', reason: 'r'.repeat(5000) });
    expect(entry?.reason).toHaveLength(1024);
  });

  it('keeps the order of one process, and says once when the store keeps no audit log', async () => {
    const records = new MemoryAudit();
    const log = new AuditLog(records, clock, captureLogger().logger);
    await Promise.all(Array.from({ length: 20 }, (_, i) => log.append({ kind: 'approval.asked', tool: `t${i}` })));
    const tools = (await log.read()).entries.map((e) => (JSON.parse(e.text) as { tool: string }).tool);
    expect(tools).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`));
    const logs = captureLogger();
    const none = new AuditLog(({} as Store).audit, clock, logs.logger);
    expect(await none.append({ kind: 'approval.asked' })).toBeUndefined();
    expect(await none.append({ kind: 'approval.asked' })).toBeUndefined();
    expect(logs.records.filter((r) => r.event === 'audit.unavailable')).toHaveLength(1);
  });

  it('refuses paging out of bounds', async () => {
    const { log } = await chain(1, 10);
    expect(() => log.read(-1)).toThrow(RangeError);
    expect(() => log.read(0, 0)).toThrow(RangeError);
    expect(() => log.read(0, 10_001)).toThrow(RangeError);
  });

  it('verifies any trimmed chain, and fails it after any one edit, deletion or swap', async () => {
    const edit = fc.oneof(
      fc.record({ op: fc.constant('modify' as const), at: fc.nat() }),
      fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
      fc.record({ op: fc.constant('swap' as const), at: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 2, max: 15 }), edit, async (n, max, e) => {
        const { log } = await chain(n, max);
        const page = await log.read(0, 1000);
        expect(verdict(page)).toBe(true);
        const entries = [...page.entries];
        const at = e.at % entries.length;
        const target = entries[at] as { seq: number; text: string };
        if (e.op === 'modify') entries[at] = { seq: target.seq, text: target.text.replace('"ops"', '"eve"') };
        else if (e.op === 'delete') entries.splice(at, 1);
        else {
          if (entries.length < 2) return;
          const j = at === 0 ? 1 : at - 1;
          const other = entries[j] as { seq: number; text: string };
          entries[at] = { seq: target.seq, text: other.text };
          entries[j] = { seq: other.seq, text: target.text };
        }
        expect(verdict({ ...page, entries })).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});

/** A call by the caller an adopted server's own verifier names `sub` (its caller key is `auth:app:<sub>`). */
const by = (sub: string): { authInfo: AuthInfo } => ({
  authInfo: { token: 't', clientId: 'app', scopes: [], extra: { sub } },
});

async function kept(log: AuditLog): Promise<AuditEntry[]> {
  return (await log.read(0, 10_000)).entries.map((e) => JSON.parse(e.text) as AuditEntry);
}

/** Lets the appends a timer started reach the log. */
async function drain(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("a caller's budget of appends", () => {
  it("keeps another caller's entry in a log of 20 while one caller appends 1 000 in a minute", async () => {
    const clock = new FakeClock(1_700_000_070_000);
    const store = new MemoryStore(clock);
    const options = { maxEntries: 20, perCaller: { maxEntries: 5, windowMs: 60_000 } };
    const log = new AuditLog(store.audit, clock, captureLogger().logger, options, store);
    expect(await log.append({ kind: 'approval.asked', caller: 'victim', tool: 'deploy' }, by('victim'))).toBeDefined();
    const noisy = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        log.append({ kind: i % 2 ? 'approval.answered' : 'approval.asked', caller: 'noisy' }, by('noisy')),
      ),
    );
    expect(noisy.filter((entry) => entry !== undefined)).toHaveLength(5);
    // What no caller made (an operator's decision, a ledger hold) is never counted.
    for (let i = 0; i < 10; i++) await log.append({ kind: 'ledger.revoked', tool: `t${i}`, by: 'ops' });
    expect((await kept(log)).filter((e) => e.caller === 'victim')).toHaveLength(1);
    expect((await kept(log)).filter((e) => e.caller === 'noisy')).toHaveLength(5);
    // Once the minute is over, one entry says how many were left out, and the caller has its budget again.
    // The summary waits a second past the minute, for other replicas' last counts.
    clock.advance(30_000);
    await drain();
    expect((await kept(log)).filter((e) => e.kind === 'audit.suppressed')).toEqual([]);
    clock.advance(1_000);
    await drain();
    expect((await kept(log)).filter((e) => e.kind === 'audit.suppressed')).toMatchObject([
      {
        caller: 'auth:app:noisy',
        by: 'sluice',
        decision: 'suppressed',
        reason:
          '995 more entries from caller auth:app:noisy suppressed in the minute from 2023-11-14T22:14:00.000Z (at most 5 a minute)',
      },
    ]);
    expect(await log.append({ kind: 'approval.asked', caller: 'noisy' }, by('noisy'))).toBeDefined();
    expect((await log.verify()).ok).toBe(true);
  });

  it('counts over every replica sharing the store, unauthenticated callers as one, and writes one summary', async () => {
    const clock = new FakeClock(1_700_000_070_000);
    const store = new MemoryStore(clock);
    const options = { perCaller: { maxEntries: 3, windowMs: 10_000 } };
    const here = new AuditLog(store.audit, clock, captureLogger().logger, options, store);
    const there = new AuditLog(store.audit, clock, captureLogger().logger, options, store);
    const anonymous = { authInfo: undefined };
    const written = [];
    for (let i = 0; i < 10; i++)
      written.push(await (i % 2 ? here : there).append({ kind: 'approval.asked' }, anonymous));
    expect(written.filter((entry) => entry !== undefined)).toHaveLength(3);
    clock.advance(11_000);
    await drain();
    const summaries = (await kept(here)).filter((e) => e.kind === 'audit.suppressed');
    expect(summaries.map((e) => e.caller)).toEqual(['anonymous']);
    expect(summaries[0]?.reason).toMatch(/^7 more entries from caller anonymous suppressed in the 10 s from /);
  });

  it('refuses a budget out of bounds when the server is created, naming the option', () => {
    const make = (perCaller: { maxEntries?: number; windowMs?: number }) => () =>
      createServer({ name: 's', version: '1', audit: { perCaller } });
    expect(make({ maxEntries: 0 })).toThrow(/perCaller\.maxEntries/);
    expect(make({ windowMs: 999 })).toThrow(/perCaller\.windowMs/);
    expect(make({ maxEntries: 1, windowMs: 1_000 })).not.toThrow();
  });
});

describe("an upstream's budget of appends", () => {
  it("keeps a caller's entry in a log of 100 while one upstream's ledger holds come 1 000 in a minute", async () => {
    const clock = new FakeClock(1_700_000_070_000);
    const store = new MemoryStore(clock);
    const log = new AuditLog(store.audit, clock, captureLogger().logger, { maxEntries: 100 }, store);
    expect(await log.append({ kind: 'approval.asked', caller: 'victim', tool: 'deploy' }, by('victim'))).toBeDefined();
    const held = (server: string, i: number) =>
      log.append({ kind: 'ledger.held', server, tool: `t${i}`, by: 'sluice', decision: 'AWAITING_REREVIEW' });
    const flood = await Promise.all(Array.from({ length: 1_000 }, (_, i) => held('flip', i)));
    expect(flood.filter((entry) => entry !== undefined)).toHaveLength(60);
    // Another upstream has a share of its own; an operator's decisions are never counted.
    expect(await held('calm', 0)).toBeDefined();
    for (let i = 0; i < 10; i++) await log.append({ kind: 'ledger.revoked', server: 'flip', tool: `t${i}`, by: 'ops' });
    expect((await kept(log)).filter((e) => e.caller === 'victim')).toHaveLength(1);
    clock.advance(61_000);
    await drain();
    expect((await kept(log)).filter((e) => e.kind === 'audit.suppressed')).toMatchObject([
      {
        server: 'flip',
        by: 'sluice',
        decision: 'suppressed',
        reason:
          '940 more entries from upstream flip suppressed in the minute from 2023-11-14T22:14:00.000Z (at most 60 a minute)',
      },
    ]);
    expect(await held('flip', 1_000)).toBeDefined();
    expect((await log.verify()).ok).toBe(true);
  });
});
