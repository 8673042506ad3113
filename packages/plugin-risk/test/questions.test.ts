import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryStore } from '@sluice/core';
import { FakeClock } from '@sluice/testing';
import { OperatorQuestions, isBusy } from '../src/approval/questions.js';
import type { StateBinding } from '../src/approval/request-state.js';

const binding = (args = 'a'.repeat(64)): StateBinding => ({
  principal: 'p',
  tool: 'deploy',
  server: 'local',
  args,
  fingerprint: 'f',
});
const fields = {
  tool: 'deploy',
  server: 'local',
  level: 'L4' as const,
  reason: 'risk L4',
  caller: 'ann',
  message: 'ok?',
};

/** Asks, within the share: a refusal for want of a place fails the test. */
async function ask(store: OperatorQuestions, ...args: Parameters<OperatorQuestions['ask']>) {
  const asked = await store.ask(...args);
  if (isBusy(asked)) throw new Error('refused for want of a place');
  return asked;
}

function questions(now: { value: number }) {
  return new OperatorQuestions(new MemoryStore(), () => now.value, 10);
}

describe('operator questions in the store', () => {
  it('joins an identical call to the waiting question, and asks afresh for other arguments', async () => {
    const now = { value: 1_000 };
    const store = questions(now);
    const first = await ask(store, binding(), fields, 5_000);
    const again = await ask(store, binding(), fields, 5_000);
    const other = await ask(store, binding('b'.repeat(64)), fields, 5_000);
    expect(first.joined).toBe(false);
    expect(again).toEqual({ question: first.question, joined: true });
    expect(other.joined).toBe(false);
    expect(other.question.id).not.toBe(first.question.id);
    expect((await store.pending()).map((q) => q.id)).toEqual([first.question.id, other.question.id]);
  });

  it('takes the first answer only, and none after the lapse', async () => {
    const now = { value: 1_000 };
    const store = questions(now);
    const { question } = await ask(store, binding(), fields, 5_000);
    const answer = { decision: 'approved' as const, by: 'key:ops', via: 'api' as const, reason: undefined };
    expect(await store.answer(question.id, answer)).toEqual({ ok: true, question });
    expect(await store.answer(question.id, { ...answer, decision: 'denied' })).toEqual({ ok: false, why: 'answered' });
    expect(await store.pending()).toEqual([]);
    const late = (await ask(store, binding('c'.repeat(64)), fields, 5_000)).question;
    now.value += 5_000;
    expect(await store.answer(late.id, answer)).toEqual({ ok: false, why: 'lapsed' });
    expect(await store.answerOf(late)).toMatchObject({ decision: 'lapsed' });
  });

  it('says whether one question still waits: not once answered, lapsed, or for an id it never made', async () => {
    const now = { value: 1_000 };
    const store = questions(now);
    const { question } = await ask(store, binding(), fields, 5_000);
    const other = (await ask(store, binding('d'.repeat(64)), fields, 5_000)).question;
    expect(await store.waiting(question.id)).toBe(true);
    const answer = { decision: 'denied' as const, by: 'key:ops', via: 'api' as const, reason: undefined };
    expect((await store.answer(question.id, answer)).ok).toBe(true);
    expect(await store.waiting(question.id)).toBe(false);
    expect(await store.waiting(other.id)).toBe(true);
    now.value += 5_000;
    expect(await store.waiting(other.id)).toBe(false);
    for (const id of ['', 'x', '999-aaaa', `${other.id}x`]) expect(await store.waiting(id)).toBe(false);
  });

  it("counts one caller's minute across replicas whose clocks straddle a minute's edge", async () => {
    // One store (Redis in a fleet, with its own clock); replica b's clock runs 30 s ahead of a's, so by their own
    // clocks a is in minute 0 and b in minute 1.
    const store = new MemoryStore(new FakeClock(59_000));
    const limits = { max: 100, perCaller: 100, perCallerPerMinute: 3 };
    const a = new OperatorQuestions(store, () => 59_000, 10, limits);
    const b = new OperatorQuestions(store, () => 89_000, 10, limits);
    const { caller, ...rest } = fields;
    const asked = async (replica: OperatorQuestions) =>
      replica.record({ ...rest, caller }, 'elicitation', 5_000, undefined, caller);
    for (let i = 0; i < 2; i++) expect(isBusy(await asked(a))).toBe(false);
    expect(isBusy(await asked(b))).toBe(false);
    for (const replica of [a, b, a, b]) expect(await asked(replica)).toMatchObject({ busy: 'rate', limit: 3 });
  });

  it('lets an approval run once, then asks afresh for the same call', async () => {
    const now = { value: 1_000 };
    const store = questions(now);
    const { question } = await ask(store, binding(), fields, 5_000);
    await store.answer(question.id, { decision: 'approved', by: 'key:ops', via: 'api', reason: undefined });
    expect(await store.claim(question)).toBe(true);
    expect(await store.claim(question)).toBe(false);
    const next = await ask(store, binding(), fields, 5_000);
    expect(next.joined).toBe(false);
  });

  it('hands the question to the latest waiter', async () => {
    const now = { value: 1_000 };
    const store = questions(now);
    const { question } = await ask(store, binding(), fields, 5_000);
    const first = await store.hold(question);
    const second = await store.hold(question);
    expect(await store.holds(question, first)).toBe(false);
    expect(await store.holds(question, second)).toBe(true);
  });

  it('wakes a waiter at once when the answer is given on the same replica, and gives up at its deadline', async () => {
    const now = { value: 1_000 };
    const store = new OperatorQuestions(new MemoryStore(), () => now.value, 60_000);
    const { question } = await ask(store, binding(), fields, 5_000);
    const waiting = store.wait(question, Number.MAX_SAFE_INTEGER);
    await store.answer(question.id, { decision: 'denied', by: 'key:ops', via: 'console', reason: 'no' });
    expect(await waiting).toMatchObject({ decision: 'denied', reason: 'no', by: 'key:ops' });
    const other = (await ask(store, binding('d'.repeat(64)), fields, 5_000)).question;
    expect(await store.wait(other, now.value)).toBeUndefined();
  });

  it('knows no question by an id it did not make', async () => {
    const store = questions({ value: 1_000 });
    await ask(store, binding(), fields, 5_000);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), async (id) => {
        expect(await store.find(id)).toBeUndefined();
        expect(await store.answer(id, { decision: 'approved', by: 'x', via: 'api', reason: undefined })).toEqual({
          ok: false,
          why: 'unknown',
        });
      }),
      { numRuns: 300 },
    );
  });
});
