import { describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import { RiskErrorCode } from '@sluice/plugin-risk';
import { errorOf, textOf } from '@sluice/testing';
import { MAX_PENDING_APPROVALS } from '../src/approval/pending.js';
import { OperatorQuestions, isBusy } from '../src/approval/questions.js';
import type { OperatorQuestion } from '../src/approval/questions.js';
import type { ApprovalServer, Person } from './approval-helpers.js';
import { accept, approvalServer, closeAfterEach, legacyClient, manualClient } from './approval-helpers.js';
import '@sluice/http';

const track = closeAfterEach();

async function start(...args: Parameters<typeof approvalServer>): Promise<ApprovalServer> {
  return track(await approvalServer(...args));
}

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

const question = { tool: 'deploy', server: 'local', level: 'L4' as const, reason: 'risk L4', caller: undefined };

/** Records a client's question, within the share: a refusal for want of a place fails the test. */
async function record(
  questions: OperatorQuestions,
  ...args: Parameters<OperatorQuestions['record']>
): Promise<OperatorQuestion> {
  const recorded = await questions.record(...args);
  if (isBusy(recorded)) throw new Error('refused for want of a place');
  return recorded;
}

describe('the list of pending approvals', () => {
  it('lists every one of MAX_PENDING_APPROVALS waiting questions, and asks no more than that', async () => {
    const questions = new OperatorQuestions(new MemoryStore(), () => 1_000, 10);
    for (let i = 0; i < MAX_PENDING_APPROVALS; i++)
      await record(questions, { ...question, tool: `t${i}` }, 'elicitation', 5_000, undefined, `caller-${i}`);
    expect(await questions.record({ ...question, tool: 'over' }, 'elicitation', 5_000, undefined, 'another')).toEqual({
      busy: 'server',
      limit: MAX_PENDING_APPROVALS,
      first: true,
      retryAfterMs: 5_000,
    });
    const listed = await questions.pending();
    expect(listed).toHaveLength(MAX_PENDING_APPROVALS);
    expect(listed[0]?.tool).toBe('t0');
  });

  it('drops a question once it expires, and when it is closed (twice is harmless)', async () => {
    let now = 1_000;
    const questions = new OperatorQuestions(new MemoryStore(), () => now, 10);
    const ended = await record(questions, { ...question, tool: 'ended' }, 'elicitation', 5_000);
    await questions.record({ ...question, tool: 'lapses' }, 'elicitation', 500);
    await questions.close(ended);
    await questions.close(ended);
    expect((await questions.pending()).map((p) => p.tool)).toEqual(['lapses']);
    now = 1_500;
    expect(await questions.pending()).toEqual([]);
  });

  it('drops a 2026-07-28 question closed by its nonce on any replica sharing the store', async () => {
    const store = new MemoryStore();
    const here = new OperatorQuestions(store, () => 1_000, 10);
    const there = new OperatorQuestions(store, () => 1_000, 10);
    await here.record({ ...question, tool: 'answered' }, 'input-required', 5_000, 'n-answered-0123456');
    await here.record({ ...question, tool: 'waits' }, 'input-required', 5_000, 'n-waits-0123456789');
    expect((await there.pending()).map((p) => p.tool)).toEqual(['answered', 'waits']);
    await there.closeByNonce('n-answered-0123456');
    expect((await here.pending()).map((p) => p.tool)).toEqual(['waits']);
  });

  it('takes no operator answer to a question the client answers', async () => {
    const questions = new OperatorQuestions(new MemoryStore(), () => 1_000, 10);
    const asked = await record(questions, question, 'elicitation', 5_000);
    expect(
      await questions.answer(asked.id, { decision: 'approved', by: 'key:ops', via: 'api', reason: undefined }),
    ).toEqual({ ok: false, why: 'client' });
    expect((await questions.pending()).map((p) => p.id)).toEqual([asked.id]);
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

  it('masks and caps the reason, and shows neither the form nor the state', async () => {
    const s = await start({ secrets: ['s3cret-value-0001'] });
    s.server.tool({
      name: 'careful',
      handler: async (_args, ctx) => {
        const decision = await ctx.approve({
          message: 'Empty the cache s3cret-value-0001?',
          reason: `token s3cret-value-0001 ${'x'.repeat(500)}`,
        });
        return { content: [{ type: 'text', text: decision.approved ? 'emptied' : 'kept' }] };
      },
    });
    const held = heldPerson();
    const client = track(await legacyClient(s.server, held.person));
    const call = client.call('careful');
    await held.asked;
    const [shown] = await s.plugin.pendingApprovals();
    expect(shown?.reason).toMatch(/^token \[redacted\] x+$/);
    expect(shown?.reason).toHaveLength(200);
    expect(JSON.stringify(shown)).not.toContain('Empty the cache');
    held.answer();
    expect(textOf(await call)).toBe('emptied');
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

  it('lists a 2026-07-28 question on every replica sharing the store, and forgets it once another answered it', async () => {
    const store = new MemoryStore();
    const secret = 'a shared approval key of at least 32 bytes';
    const here = await start({ approval: { secret } }, store);
    const there = await start({ approval: { secret } }, store);
    const asking = track(await manualClient((await here.server.listen()).url));
    const answering = track(await manualClient((await there.server.listen()).url));
    const { requestState } = await asking.first('deploy', { env: 'prod' });
    expect(await here.plugin.pendingApprovals()).toHaveLength(1);
    // Listed by the other replica too: the question lives in the store.
    expect(await there.plugin.pendingApprovals()).toHaveLength(1);
    expect(textOf(await answering.retry('deploy', { env: 'prod' }, requestState, accept))).toBe('deployed to prod');
    expect(await here.plugin.pendingApprovals()).toEqual([]);
  });
});
