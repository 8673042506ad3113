import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import { RiskErrorCode } from '@sluice/plugin-risk';
import { errorOf, textOf } from '@sluice/core/testing';
import { PendingApprovals } from '../src/approval/pending.js';
import type { PendingInput } from '../src/approval/pending.js';
import type { ApprovalServer, Person } from './approval-helpers.js';
import { accept, approvalServer, legacyClient, manualClient } from './approval-helpers.js';
import '@sluice/http';

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

function track<T extends { close(): Promise<unknown> }>(thing: T): T {
  open.push(thing);
  return thing;
}

async function start(...args: Parameters<typeof approvalServer>): Promise<ApprovalServer> {
  return track(await approvalServer(...args));
}

const wait = (overrides: Partial<PendingInput> = {}): PendingInput => ({
  tool: 'deploy',
  server: 'local',
  level: 'L4',
  reason: 'risk L4',
  via: 'elicitation',
  caller: undefined,
  since: 1_000,
  expiresAt: 2_000,
  ...overrides,
});

/** A person who answers only when told to. */
function heldPerson(): { person: Person; answer(): void; asked: Promise<void> } {
  let release = (): void => {};
  let asked = (): void => {};
  const answered = new Promise<void>((resolve) => (release = resolve));
  const wasAsked = new Promise<void>((resolve) => (asked = resolve));
  return {
    person: async () => {
      asked();
      await answered;
      return { action: 'accept', content: { approve: true } };
    },
    answer: () => release(),
    asked: wasAsked,
  };
}

describe('the list of pending approvals', () => {
  it('keeps at most its bound, forgetting the oldest wait first', async () => {
    const pending = new PendingApprovals(
      () => 1_000,
      (text) => text,
      3,
    );
    for (const tool of ['a', 'b', 'c', 'd']) pending.add(wait({ tool }));
    expect((await pending.list()).map((p) => p.tool)).toEqual(['b', 'c', 'd']);
  });

  it('drops a wait once it expires, and when its end is called (twice is harmless)', async () => {
    let now = 1_000;
    const pending = new PendingApprovals(
      () => now,
      (text) => text,
    );
    const end = pending.add(wait({ tool: 'ended' }));
    pending.add(wait({ tool: 'lapses', expiresAt: 1_500 }));
    end();
    end();
    expect((await pending.list()).map((p) => p.tool)).toEqual(['lapses']);
    now = 1_500;
    expect(await pending.list()).toEqual([]);
  });

  it('drops a 2026-07-28 question when its nonce is settled here or spent elsewhere', async () => {
    const pending = new PendingApprovals(
      () => 1_000,
      (text) => text,
    );
    pending.add(wait({ tool: 'here', via: 'input-required', nonce: 'n-here' }));
    pending.add(wait({ tool: 'elsewhere', via: 'input-required', nonce: 'n-elsewhere' }));
    pending.settle('n-here');
    expect((await pending.list()).map((p) => p.tool)).toEqual(['elsewhere']);
    expect(await pending.list((nonce) => Promise.resolve(nonce === 'n-elsewhere'))).toEqual([]);
  });

  it('masks and caps the reason, and shows no nonce', async () => {
    const pending = new PendingApprovals(
      () => 1_000,
      (text) => text.replaceAll('s3cret', '***'),
    );
    pending.add(wait({ reason: `token s3cret ${'x'.repeat(500)}`, via: 'input-required', nonce: 'the-nonce' }));
    const [shown] = await pending.list();
    expect(shown?.reason).toMatch(/^token \*\*\* x+$/);
    expect(shown?.reason).toHaveLength(200);
    expect(JSON.stringify(shown)).not.toContain('the-nonce');
  });
});

describe('pending approvals of a running server', () => {
  it('lists a 2025-11-25 call while its elicitation waits, without its arguments, and forgets it once answered', async () => {
    const s = await start();
    const held = heldPerson();
    const client = track(await legacyClient(s.server, held.person));
    const call = client.call('deploy', { env: 'prod-eu-7' });
    await held.asked;
    const [waiting, ...others] = await s.plugin.pendingApprovals();
    expect(others).toEqual([]);
    expect(waiting).toMatchObject({ tool: 'deploy', server: 'local', level: 'L0', via: 'elicitation' });
    expect(waiting?.reason).toBe('risk L0');
    expect(waiting?.expiresAt).toBe((waiting?.since ?? 0) + 300_000);
    expect(JSON.stringify(waiting)).not.toContain('prod-eu-7');
    held.answer();
    expect(textOf(await call)).toBe('deployed to prod-eu-7');
    expect(await s.plugin.pendingApprovals()).toEqual([]);
  });

  it('forgets a 2025-11-25 wait that timed out', async () => {
    const s = await start({ approval: { timeoutMs: 100 } });
    const client = track(await legacyClient(s.server, () => 'hang'));
    expect(errorOf(await client.call('deploy', { env: 'prod' }))?.code).toBe(RiskErrorCode.APPROVAL_TIMEOUT);
    expect(await s.plugin.pendingApprovals()).toEqual([]);
  });

  it('lists a 2026-07-28 question from its first round until the retry answers it', async () => {
    const s = await start();
    const client = track(await manualClient((await s.server.listen()).url));
    const args = { env: 'prod' };
    const { requestState } = await client.first('deploy', args);
    expect(await s.plugin.pendingApprovals()).toMatchObject([{ tool: 'deploy', via: 'input-required' }]);
    expect(JSON.stringify(await s.plugin.pendingApprovals())).not.toContain(requestState);
    expect(textOf(await client.retry('deploy', args, requestState, accept))).toBe('deployed to prod');
    expect(await s.plugin.pendingApprovals()).toEqual([]);
  });

  it('lists a declined 2026-07-28 question no more, and one left unanswered until it expires', async () => {
    const s = await start({ approval: { timeoutMs: 60_000 } });
    const client = track(await manualClient((await s.server.listen()).url));
    const { requestState } = await client.first('deploy', { env: 'a' });
    await client.first('deploy', { env: 'b' });
    expect(await s.plugin.pendingApprovals()).toHaveLength(2);
    await client.retry('deploy', { env: 'a' }, requestState, { action: 'decline' });
    expect(await s.plugin.pendingApprovals()).toHaveLength(1);
    s.clock.advance(60_000);
    expect(await s.plugin.pendingApprovals()).toEqual([]);
  });

  it('forgets a 2026-07-28 question that another replica sharing the store answered', async () => {
    const store = new MemoryStore();
    const secret = 'a shared approval key of at least 32 bytes';
    const here = await start({ approval: { secret } }, store);
    const there = await start({ approval: { secret } }, store);
    const asking = track(await manualClient((await here.server.listen()).url));
    const answering = track(await manualClient((await there.server.listen()).url));
    const { requestState } = await asking.first('deploy', { env: 'prod' });
    expect(await here.plugin.pendingApprovals()).toHaveLength(1);
    expect(textOf(await answering.retry('deploy', { env: 'prod' }, requestState, accept))).toBe('deployed to prod');
    expect(await here.plugin.pendingApprovals()).toEqual([]);
  });
});
