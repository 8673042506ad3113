// The audit chain in Redis: two stores under one prefix act as two replicas
// appending to one chain. Tampering is done the way an intruder with Redis
// access would, by editing the sorted set directly; `verify()` must name it.
import { AuditChainCheck, AuditLog, auditHash } from '@sluice/audit';
import type { AuditVerification } from '@sluice/audit';
import { captureLogger } from '@sluice/testing';
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

function logOf(factory: StoreFactory, maxEntries = 1000): AuditLog {
  return new AuditLog(factory.open().store.audit, { now: Date.now }, captureLogger().logger, { maxEntries });
}

async function filled(count: number, maxEntries = 1000): Promise<{ log: AuditLog; key: string }> {
  stores = new StoreFactory(redis);
  const log = logOf(stores, maxEntries);
  for (let i = 1; i <= count; i++)
    await log.append({ kind: 'approval.asked', tool: `tool-${i}`, caller: 'alice', channel: 'elicitation' });
  return { log, key: `${stores.prefix}audit:{chain}:entries` };
}

/** The member stored at `seq`. */
async function memberAt(key: string, seq: number): Promise<string> {
  const [member] = await look.zrangebyscore(key, seq, seq);
  if (member === undefined) throw new Error(`no entry ${seq}`);
  return member;
}

const kinds = (result: AuditVerification) => result.problems.map((p) => `${p.kind}@${p.seq}`);

describe('the audit chain in Redis', () => {
  it("holds one caller's budget over every replica: one caller's flood cannot push another's entry out", async () => {
    stores = new StoreFactory(redis);
    const options = { maxEntries: 20, perCaller: { maxEntries: 5 } };
    // One instant: the appends all fall in one window, however slow the run.
    const at = Date.now();
    const replicas = [0, 1, 2].map(() => {
      const { store } = stores!.open();
      return new AuditLog(store.audit, { now: () => at }, captureLogger().logger, options, store);
    });
    const by = (sub: string) => ({ authInfo: { token: 't', clientId: 'app', scopes: [], extra: { sub } } });
    await replicas[0]!.append({ kind: 'approval.asked', caller: 'victim' }, by('victim'));
    const noisy = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        replicas[i % 3]!.append({ kind: 'approval.asked', caller: 'noisy' }, by('noisy')),
      ),
    );
    expect(noisy.filter((entry) => entry !== undefined)).toHaveLength(5);
    const callers = (await replicas[1]!.read(0, 100)).entries.map(
      (e) => (JSON.parse(e.text) as { caller: string }).caller,
    );
    expect(callers.filter((caller) => caller === 'victim')).toHaveLength(1);
    expect(callers.filter((caller) => caller === 'noisy')).toHaveLength(5);
  });

  it('verifies a whole chain written by two replicas at once', async () => {
    stores = new StoreFactory(redis);
    const a = logOf(stores);
    const b = logOf(stores);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).append({ kind: 'ledger.approved', tool: `t${i}`, by: 'ops' }),
      ),
    );
    const result = await a.verify();
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.entries).toBe(40);
    expect(result.head.seq).toBe(40);
    const page = await b.read(0, 100);
    expect(page.entries.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('detects an entry modified in place', async () => {
    const { log, key } = await filled(6);
    const member = await memberAt(key, 3);
    await look.zrem(key, member);
    await look.zadd(key, 3, member.replace('"tool-3"', '"tool-x"'));
    expect(kinds(await log.verify())).toEqual(['modified@3']);
  });

  it('detects an entry rewritten with its own hash recomputed: the next one no longer follows it', async () => {
    const { log, key } = await filled(6);
    const member = await memberAt(key, 3);
    const fields = JSON.parse(member) as Record<string, string | number>;
    fields.by = 'nobody';
    fields.hash = auditHash(fields);
    await look.zrem(key, member);
    await look.zadd(key, 3, JSON.stringify(fields));
    expect(kinds(await log.verify())).toEqual(['modified@4']);
  });

  it('detects a deleted entry in the middle, at the start and at the end', async () => {
    const { log, key } = await filled(8);
    await look.zrem(key, await memberAt(key, 4));
    expect(kinds(await log.verify())).toEqual(['missing@4']);
    await look.zrem(key, await memberAt(key, 1));
    expect(kinds(await log.verify())).toEqual(['missing@1', 'missing@4']);
    await look.zrem(key, await memberAt(key, 8));
    expect(kinds(await log.verify())).toContain('missing@8');
  });

  it('detects two entries swapped', async () => {
    const { log, key } = await filled(6);
    const third = await memberAt(key, 3);
    const fourth = await memberAt(key, 4);
    await look.zadd(key, 4, third, 3, fourth);
    const result = await log.verify();
    expect(result.ok).toBe(false);
    expect(result.problems.every((p) => p.kind === 'reordered')).toBe(true);
    expect(result.problems.map((p) => p.seq).sort()).toContain(3);
    expect(result.problems.map((p) => p.seq)).toContain(4);
  });

  it('detects an entry overwritten with something else', async () => {
    const { log, key } = await filled(4);
    await look.zrem(key, await memberAt(key, 2));
    await look.zadd(key, 2, 'not json');
    expect(kinds(await log.verify())).toEqual(['unreadable@2']);
  });

  it('trims the oldest past maxEntries without reporting it, across pages and replicas', async () => {
    const { log, key } = await filled(25, 10);
    expect(await look.zcard(key)).toBe(10);
    const result = await log.verify();
    expect(result.problems).toEqual([]);
    expect(result.anchor.seq).toBe(16);
    expect(result.entries).toBe(10);
    // Deleting the oldest kept entry is not trimming: the anchor says where the chain starts.
    await look.zrem(key, await memberAt(key, 16));
    expect(kinds(await log.verify())).toEqual(['missing@16']);
  });

  it('resumes at the anchor when retention trims past the entries a verify has read', async () => {
    const { log } = await filled(12, 10);
    const check = new AuditChainCheck();
    check.page(await log.read(0, 4));
    // Twenty appends later the first pages are gone; the rest of the check starts at the new anchor.
    for (let i = 0; i < 20; i++) await log.append({ kind: 'approval.lapsed', tool: 'late' });
    const rest = await log.read(6, 100);
    check.page(rest);
    expect(check.finish(rest.head).problems).toEqual([]);
  });
});
