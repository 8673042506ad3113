// A caller's share of the questions waiting for a person, and the list that shows them: a waiting question is
// listed however many newer ones come and go, a caller past its share is refused (APPROVAL_BUSY) without anybody
// being asked, a question answered, closed or expired counts no more, and replicas sharing a store share it.
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import { RiskErrorCode } from '@sluice/plugin-risk';
import type { ApprovalEvent } from '@sluice/plugin-risk';
import type { CallToolResult } from '@sluice/core';
import { FakeClock, errorOf, textOf } from '@sluice/testing';
import { OperatorQuestions, isBusy } from '../src/approval/questions.js';
import type { StateBinding } from '../src/approval/request-state.js';
import type { ApprovalServer, Person } from './approval-helpers.js';
import { accept, approvalServer, closeAfterEach, legacyClient, manualClient } from './approval-helpers.js';
import '@sluice/http';

const track = closeAfterEach();

async function start(...args: Parameters<typeof approvalServer>): Promise<ApprovalServer> {
  return track(await approvalServer(...args));
}

/** A person who is asked and never answers, until the test ends. */
function waitingPerson(): { person: Person; asked: Promise<void> } {
  let asked = (): void => {};
  const wasAsked = new Promise<void>((resolve) => (asked = resolve));
  return {
    person: () => {
      asked();
      return 'hang';
    },
    asked: wasAsked,
  };
}

const binding = (principal: string, args: string): StateBinding => ({
  principal,
  tool: 'deploy',
  server: 'local',
  args,
  fingerprint: 'f',
});
/** A first round that was refused rather than answered with a question. */
const refusedRound = (round: unknown): CallToolResult => round as CallToolResult;

const fields = { tool: 'deploy', server: 'local', level: 'L4' as const, reason: 'risk L4', message: 'Deploy?' };
/** The list's and each caller's places; a caller's questions a minute as by default. */
const shares = (max: number, perCaller: number) => ({ max, perCaller, perCallerPerMinute: 120 });

describe('the list of waiting questions', () => {
  it('keeps a waiting operator question listed however many newer questions come and go', async () => {
    // The clock stands still: the flooding caller may be asked this many in its minute (approval-records tests that bound).
    const limits = { max: 500, perCaller: 20, perCallerPerMinute: 100_000 };
    const questions = new OperatorQuestions(new MemoryStore(), () => 1_000, 10, limits);
    const victim = await questions.ask(binding('victim', 'v'), { ...fields, caller: 'victim' }, 60_000);
    const id = 'question' in victim ? victim.question.id : 'refused';
    for (let i = 0; i < 1_200; i++) {
      const nonce = `flood-nonce-${i}`;
      await questions.record({ ...fields, caller: 'flood' }, 'input-required', 60_000, nonce, 'flood');
      await questions.closeByNonce(nonce);
    }
    expect((await questions.pending()).map((q) => q.id)).toEqual([id]);
  });

  it('keeps a 2025-11-25 call listed while a 2026-07-28 client asks and declines 520 questions', async () => {
    const s = await start({ approval: { questions: { perCallerPerMinute: 1_000 } } });
    const waiting = waitingPerson();
    const legacy = track(await legacyClient(s.server, waiting.person));
    void legacy.call('deploy', { env: 'victim' }).catch(() => {});
    await waiting.asked;
    const [victim] = await s.plugin.pendingApprovals();
    expect(victim).toMatchObject({ tool: 'deploy', via: 'elicitation' });
    const client = track(await manualClient((await s.server.listen()).url));
    for (let i = 0; i < 520; i++) {
      const { requestState } = await client.first('deploy', { env: `e${i}` });
      await client.retry('deploy', { env: `e${i}` }, requestState, { action: 'decline' });
    }
    expect((await s.plugin.pendingApprovals()).map((q) => q.id)).toEqual([victim?.id]);
  });
});

describe("a caller's share of waiting questions", () => {
  it('refuses a 2026-07-28 client past its share with APPROVAL_BUSY, and asks again once one is answered', async () => {
    const s = await start({ approval: { questions: { perCaller: 3 } } });
    const client = track(await manualClient((await s.server.listen()).url));
    const states: string[] = [];
    for (let i = 0; i < 3; i++) states.push((await client.first('deploy', { env: `e${i}` })).requestState);
    const refused = refusedRound(await client.first('deploy', { env: 'e3' }));
    expect(errorOf(refused)?.code).toBe(RiskErrorCode.APPROVAL_BUSY);
    expect(textOf(refused)).toMatch(/3 of this caller's questions are already waiting/);
    expect(await s.plugin.pendingApprovals()).toHaveLength(3);
    expect(textOf(await client.retry('deploy', { env: 'e0' }, states[0], accept))).toBe('deployed to e0');
    expect((await client.first('deploy', { env: 'e3' })).requestState).toEqual(expect.any(String));
    expect(s.runs()).toBe(1);
  });

  it('tells a caller past its share when to call again: once the earliest of its own waiting questions lapses', async () => {
    const s = await start({ approval: { timeoutMs: 60_000, questions: { perCaller: 2 } } });
    const client = track(await manualClient((await s.server.listen()).url));
    await client.first('deploy', { env: 'e0' });
    s.clock.advance(10_000);
    await client.first('deploy', { env: 'e1' });
    s.clock.advance(5_000);
    const refused = refusedRound(await client.first('deploy', { env: 'e2' }));
    expect(errorOf(refused)).toMatchObject({
      code: RiskErrorCode.APPROVAL_BUSY,
      share: 'caller',
      retryAfterMs: 45_000,
    });
    expect(textOf(refused)).toMatch(/in 45 s/);
    // Once that question lapsed, its place is free: the call asks again.
    s.clock.advance(45_000);
    expect((await client.first('deploy', { env: 'e2' })).requestState).toEqual(expect.any(String));
  });

  it('refuses a 2025-11-25 call past its share without sending it a form', async () => {
    const s = await start({ approval: { questions: { perCaller: 1 } } });
    const waiting = waitingPerson();
    const legacy = track(await legacyClient(s.server, waiting.person));
    void legacy.call('deploy', { env: 'first' }).catch(() => {});
    await waiting.asked;
    expect(errorOf(await legacy.call('deploy', { env: 'second' }))?.code).toBe(RiskErrorCode.APPROVAL_BUSY);
    expect(legacy.forms).toHaveLength(1);
  });

  it('tells the listeners (and so the audit log) of the refusals once per minute, not once per refusal', async () => {
    const s = await start({ approval: { questions: { perCaller: 1 } } });
    const events: ApprovalEvent[] = [];
    s.plugin.onApprovalEvent((event) => events.push(event));
    const client = track(await manualClient((await s.server.listen()).url));
    await client.first('deploy', { env: 'kept' });
    for (let i = 0; i < 30; i++)
      expect(errorOf(refusedRound(await client.first('deploy', { env: `x${i}` })))?.code).toBe(
        RiskErrorCode.APPROVAL_BUSY,
      );
    const refused = () => events.filter((e) => e.kind === 'refused');
    expect(refused()).toHaveLength(1);
    expect(refused()[0]).toMatchObject({ code: 'busy', tool: 'deploy' });
    expect(events.filter((e) => e.kind === 'asked')).toHaveLength(1);
    s.clock.advance(60_000);
    await client.first('deploy', { env: 'later' });
    expect(refused()).toHaveLength(2);
  });
});

/**
 * A store two replicas share, where a place is given back at the worst moment: just after the release read it
 * (a read-then-delete) or just before it deletes it (a compare-and-delete), the place lapses and a newer
 * question takes it.
 */
class RacingStore extends MemoryStore {
  private race: { key: string; run: () => Promise<void> } | undefined;

  /** The next release of `key` meets `run` at its worst moment. */
  arm(key: string, run: () => Promise<void>): void {
    this.race = { key, run };
  }

  override async get<T = unknown>(key: string): Promise<T | undefined> {
    const value = await super.get<T>(key);
    await this.meet(key);
    return value;
  }

  override async delete(key: string): Promise<boolean> {
    await this.meet(key);
    return await super.delete(key);
  }

  override async compareAndDelete(key: string, expected: string | number | boolean): Promise<boolean> {
    await this.meet(key);
    return await super.compareAndDelete(key, expected);
  }

  private async meet(key: string): Promise<void> {
    const race = this.race;
    if (race === undefined || race.key !== key) return;
    this.race = undefined;
    await race.run();
  }
}

describe('the share, in the store', () => {
  it("never frees a newer question's place: a release from a replica whose clock lags 2 s comes too late", async () => {
    const clock = new FakeClock(1_000);
    const store = new RacingStore(clock);
    const limits = shares(1, 1);
    const there = new OperatorQuestions(store, () => clock.now(), 10, limits);
    const lagging = new OperatorQuestions(store, () => clock.now() - 2_000, 10, limits);
    const asked = await there.record({ ...fields, caller: 'ann' }, 'elicitation', 5_000, undefined, 'ann');
    if (isBusy(asked)) throw new Error('refused within the share');
    // 500 ms before the question lapses, by the store's time; 2.5 s before, by the lagging replica's.
    clock.advance(4_500);
    store.arm('dev.sluice/risk/approval/list/0', async () => {
      clock.advance(500);
      expect(isBusy(await there.record({ ...fields, caller: 'bob' }, 'elicitation', 5_000, undefined, 'bob'))).toBe(
        false,
      );
    });
    await lagging.close(asked);
    // Bob's question keeps its place: it is listed, and the list (of one) stays full.
    expect((await there.pending()).map((q) => q.caller)).toEqual(['bob']);
    expect(await there.record({ ...fields, caller: 'cy' }, 'elicitation', 5_000, undefined, 'cy')).toMatchObject({
      busy: 'server',
    });
  });

  it("refuses past the caller's share, never another caller's, and frees a place when a question ends", async () => {
    const clock = new FakeClock(1_000);
    const questions = new OperatorQuestions(new MemoryStore(clock), () => clock.now(), 10, shares(100, 2));
    const a = await questions.ask(binding('ann', 'a'), { ...fields, caller: 'ann' }, 5_000);
    const b = await questions.record({ ...fields, caller: 'ann' }, 'elicitation', 60_000, undefined, 'ann');
    const over = await questions.ask(binding('ann', 'c'), { ...fields, caller: 'ann' }, 5_000);
    expect(over).toMatchObject({ busy: 'caller', limit: 2, first: true });
    expect(await questions.ask(binding('ann', 'd'), { ...fields, caller: 'ann' }, 5_000)).toMatchObject({
      busy: 'caller',
      first: false,
    });
    // An identical call joins its question: it takes no place.
    expect(await questions.ask(binding('ann', 'a'), { ...fields, caller: 'ann' }, 5_000)).toMatchObject({
      joined: true,
    });
    expect(isBusy(await questions.ask(binding('bob', 'a'), { ...fields, caller: 'bob' }, 5_000))).toBe(false);
    if (isBusy(a) || isBusy(b)) throw new Error('refused within the share');
    // Closed: a client's question ends.
    await questions.close(b);
    expect(isBusy(await questions.ask(binding('ann', 'e'), { ...fields, caller: 'ann' }, 5_000))).toBe(false);
    expect(isBusy(await questions.ask(binding('ann', 'f'), { ...fields, caller: 'ann' }, 5_000))).toBe(true);
    // Answered by an operator.
    expect(await questions.answer(a.question.id, { decision: 'denied', by: 'ops', via: 'api', reason: 'no' })).toEqual({
      ok: true,
      question: a.question,
    });
    expect(isBusy(await questions.ask(binding('ann', 'g'), { ...fields, caller: 'ann' }, 5_000))).toBe(false);
    expect(isBusy(await questions.ask(binding('ann', 'h'), { ...fields, caller: 'ann' }, 5_000))).toBe(true);
    // Expired: its places lapse with it.
    clock.advance(5_000);
    expect(isBusy(await questions.ask(binding('ann', 'i'), { ...fields, caller: 'ann' }, 5_000))).toBe(false);
    expect((await questions.pending()).filter((q) => q.caller === 'ann')).toHaveLength(1);
  });

  it("says when a place frees: the caller's own earliest question for its share, the list's for the list", async () => {
    const clock = new FakeClock(1_000);
    const questions = new OperatorQuestions(new MemoryStore(clock), () => clock.now(), 10, shares(3, 2));
    // Bob's question is older than any of Ann's: it lapses first, but frees no place in Ann's share.
    expect(isBusy(await questions.ask(binding('bob', 'a'), { ...fields, caller: 'bob' }, 20_000))).toBe(false);
    clock.advance(1_000);
    expect(isBusy(await questions.ask(binding('ann', 'a'), { ...fields, caller: 'ann' }, 30_000))).toBe(false);
    clock.advance(1_000);
    expect(isBusy(await questions.ask(binding('ann', 'b'), { ...fields, caller: 'ann' }, 5_000))).toBe(false);
    clock.advance(1_000);
    // Ann's second question lapses first of hers (asked later, with a shorter wait): in 4 s.
    expect(await questions.ask(binding('ann', 'c'), { ...fields, caller: 'ann' }, 30_000)).toMatchObject({
      busy: 'caller',
      retryAfterMs: 4_000,
    });
    // The list is full (3): its earliest lapse is Ann's second question too; after that, Bob's.
    expect(await questions.ask(binding('cy', 'a'), { ...fields, caller: 'cy' }, 30_000)).toMatchObject({
      busy: 'server',
      retryAfterMs: 4_000,
    });
    clock.advance(4_000);
    expect(isBusy(await questions.ask(binding('cy', 'a'), { ...fields, caller: 'cy' }, 30_000))).toBe(false);
    expect(await questions.ask(binding('dee', 'a'), { ...fields, caller: 'dee' }, 30_000)).toMatchObject({
      busy: 'server',
      retryAfterMs: 13_000,
    });
  });

  it('tells a caller joining a question once, however often it repeats the call (the audit log hears it once)', async () => {
    const clock = new FakeClock(1_000);
    const questions = new OperatorQuestions(new MemoryStore(clock), () => clock.now(), 10, shares(100, 2));
    const asked = await questions.ask(binding('ann', 'a'), { ...fields, caller: 'ann' }, 5_000);
    if (isBusy(asked)) throw new Error('refused within the share');
    const again = await questions.ask(binding('ann', 'a'), { ...fields, caller: 'ann' }, 5_000);
    if (isBusy(again) || !again.joined) throw new Error('an identical call did not join');
    expect(await questions.firstJoin(again.question, 'ann')).toBe(true);
    for (let i = 0; i < 5; i++) expect(await questions.firstJoin(again.question, 'ann')).toBe(false);
    expect(await questions.firstJoin(again.question, 'bob')).toBe(true);
    // Once the question lapses, so does the mark.
    clock.advance(5_000);
    expect(await questions.firstJoin(again.question, 'ann')).toBe(true);
  });

  it('holds the share and the list bound across replicas sharing a store, and lists every live question', async () => {
    const store = new MemoryStore();
    const here = new OperatorQuestions(store, () => 1_000, 10, shares(4, 2));
    const there = new OperatorQuestions(store, () => 1_000, 10, shares(4, 2));
    expect(isBusy(await here.ask(binding('ann', 'a'), { ...fields, caller: 'ann' }, 5_000))).toBe(false);
    expect(isBusy(await there.ask(binding('ann', 'b'), { ...fields, caller: 'ann' }, 5_000))).toBe(false);
    expect(await here.ask(binding('ann', 'c'), { ...fields, caller: 'ann' }, 5_000)).toMatchObject({ busy: 'caller' });
    expect(await there.ask(binding('ann', 'c'), { ...fields, caller: 'ann' }, 5_000)).toMatchObject({ busy: 'caller' });
    expect(isBusy(await there.ask(binding('bob', 'a'), { ...fields, caller: 'bob' }, 5_000))).toBe(false);
    expect(isBusy(await here.record({ ...fields, caller: 'cy' }, 'elicitation', 5_000, undefined, 'cy'))).toBe(false);
    // The list is full: a fifth question, whoever asks, is refused rather than asked unlisted.
    expect(await there.record({ ...fields, caller: 'dee' }, 'elicitation', 5_000, undefined, 'dee')).toMatchObject({
      busy: 'server',
      limit: 4,
    });
    expect((await there.pending()).map((q) => q.caller)).toEqual(['ann', 'ann', 'bob', 'cy']);
    expect(await here.pending()).toEqual(await there.pending());
  });
});
