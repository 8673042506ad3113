// What a caller's approval questions leave in the server's store (the store every caller shares, Redis on a fleet)
// once they end. The attack: one API key asks a client-channel approval and declines it, in a loop. A 2025-11-25
// question leaves nothing once it ends; a 2026-07-28 one leaves the two marks that keep its state single-use until
// it expires; and one caller is asked at most `approval.questions.perCallerPerMinute` questions a minute, so what its
// questions leave is bounded per caller, while another caller is still asked.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '@sluice/core';
import type { CallToolResult, SetOptions, WindowCount } from '@sluice/core';
import { FakeClock, errorOf, textOf } from '@sluice/testing';
import { RiskErrorCode } from '@sluice/plugin-risk';
import type { ApprovalEvent } from '@sluice/plugin-risk';
import { OperatorQuestions, isBusy } from '../src/approval/questions.js';
import type { ApprovalServer } from './approval-helpers.js';
import { accept, approvalServer, closeAfterEach, legacyClient, manualClient, no } from './approval-helpers.js';
import '@sluice/http';

const track = closeAfterEach();

const APPROVALS = 'dev.sluice/risk/approval';
const MALLORY = 'approval-records-mallory-key-0123456789';
const ALICE = 'approval-records-alice-key-0123456789';

/** A memory store that can say which of the keys ever written under a prefix it still holds. */
class KeptStore extends MemoryStore {
  private readonly written = new Set<string>();

  override async set(key: string, value: unknown, options?: SetOptions): Promise<void> {
    this.written.add(key);
    await super.set(key, value, options);
  }

  override async setIfAbsent(key: string, value: unknown, options?: SetOptions): Promise<boolean> {
    this.written.add(key);
    return await super.setIfAbsent(key, value, options);
  }

  override async increment(key: string, by?: number, options?: SetOptions): Promise<number> {
    this.written.add(key);
    return await super.increment(key, by, options);
  }

  override async incrementWindow(key: string, windowMs: number, by?: number): Promise<WindowCount> {
    this.written.add(key);
    return await super.incrementWindow(key, windowMs, by);
  }

  /** The live keys under `prefix`. */
  async kept(prefix = APPROVALS): Promise<string[]> {
    const live: string[] = [];
    for (const key of this.written) if (key.startsWith(prefix) && (await this.get(key)) !== undefined) live.push(key);
    return live;
  }
}

/** A question's own records: its text, its answer, and (2026-07-28) its state's nonce and the nonce's spent mark. */
const questionRecords = (keys: readonly string[]): string[] =>
  keys.filter((key) => /\/approval\/(q|a|nonce)\/|\/approval-nonce\//.test(key));

async function start(
  store: MemoryStore,
  options: Parameters<typeof approvalServer>[0] = {},
  clock?: FakeClock,
): Promise<ApprovalServer> {
  return track(await approvalServer(options, store, undefined, clock));
}

const refusedRound = (round: unknown): CallToolResult => round as CallToolResult;

describe("what a caller's questions leave in the store", () => {
  it('keeps no record of a 2025-11-25 question once it is answered, however many one caller asks and declines', async () => {
    const store = new KeptStore();
    const s = await start(store);
    const client = track(await legacyClient(s.server, no));
    for (let i = 0; i < 100; i++) {
      expect(errorOf(await client.call('deploy', { env: `e${i}` }))?.code).toBe(RiskErrorCode.APPROVAL_DECLINED);
      // A second apart: as fast as a person could answer, and within a caller's default questions a minute.
      s.clock.advance(1_000);
    }
    expect(client.forms).toHaveLength(100);
    expect(questionRecords(await store.kept())).toEqual([]);
  });

  it("bounds what one key's 2026-07-28 questions leave: past its minute's questions it is refused, and another key is still asked", async () => {
    // The store times each caller's minute: it reads the server's clock.
    const clock = new FakeClock(Date.now());
    const store = new KeptStore(clock);
    const s = await start(store, {}, clock);
    const keys = [
      { name: 'mallory', key: MALLORY },
      { name: 'alice', key: ALICE },
    ];
    const { url } = await s.server.listen({ auth: { type: 'apiKeys', keys } });
    const mallory = track(await manualClient(url, MALLORY));
    const answers: CallToolResult[] = [];
    for (let i = 0; i < 300; i++) {
      // A first round past the minute is a refusal, not a question.
      const round: unknown = await mallory.first('deploy', { env: `m${i}` });
      const { requestState } = round as { requestState?: string };
      if (requestState === undefined) answers.push(refusedRound(round));
      else answers.push(await mallory.retry('deploy', { env: `m${i}` }, requestState, { action: 'decline' }));
    }
    const declined = answers.filter((a) => errorOf(a)?.code === RiskErrorCode.APPROVAL_DECLINED);
    const busy = answers.filter((a) => errorOf(a)?.code === RiskErrorCode.APPROVAL_BUSY);
    expect(declined).toHaveLength(120);
    expect(busy).toHaveLength(180);
    expect(errorOf(busy[0] as CallToolResult)).toMatchObject({ share: 'rate', limit: 120 });
    const retryAfterMs = errorOf(busy[0] as CallToolResult)?.retryAfterMs ?? 0;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(textOf(busy[0] as CallToolResult)).toMatch(/120 questions this minute/);
    // Two marks per question asked, each until its state expires: never one per call.
    expect(questionRecords(await store.kept())).toHaveLength(2 * 120);
    // Alice, another key, is asked as ever.
    const alice = track(await manualClient(url, ALICE));
    expect((await alice.first('deploy', { env: 'a' })).resultType).toBe('input_required');
    // Once the minute Mallory was told of is over, she is asked again.
    s.clock.advance(retryAfterMs);
    expect((await mallory.first('deploy', { env: 'again' })).resultType).toBe('input_required');
  });

  it('still refuses a replayed 2026-07-28 state once its question ended, naming that question', async () => {
    const store = new KeptStore();
    const s = await start(store);
    const events: ApprovalEvent[] = [];
    s.plugin.onApprovalEvent((event) => events.push(event));
    const client = track(await manualClient((await s.server.listen()).url));
    const { requestState } = await client.first('deploy', { env: 'prod' });
    expect(textOf(await client.retry('deploy', { env: 'prod' }, requestState, accept))).toBe('deployed to prod');
    // The question's text and answer are gone; the marks that keep its state single-use stay.
    const left = questionRecords(await store.kept());
    expect(left.filter((key) => /\/approval\/(q|a)\//.test(key))).toEqual([]);
    expect(left).toHaveLength(2);
    const replay = await client.retry('deploy', { env: 'prod' }, requestState, accept);
    expect(errorOf(replay)?.code).toBe(RiskErrorCode.APPROVAL_INVALID);
    expect(textOf(replay)).toContain('already used');
    expect(s.runs()).toBe(1);
    const asked = events.find((e) => e.kind === 'asked');
    expect(events.filter((e) => e.kind === 'refused')).toMatchObject([{ id: asked?.id, code: 'invalid' }]);
  });
});

/** What is kept of one question asked in the property below: who asked it, when, and how. */
interface Asked {
  readonly caller: string;
  readonly at: number;
  readonly modern: boolean;
}

describe("a caller's questions a minute, as a model", () => {
  const PER_MINUTE = 4;
  const TIMEOUT_MS = 90_000;
  const step = fc.record({
    caller: fc.constantFrom('ann', 'bob', 'cy'),
    waitMs: fc.integer({ min: 0, max: 40_000 }),
    modern: fc.boolean(),
  });

  // A store that times windows starts a caller's minute with its first question asked for after the last one
  // ended; on one that cannot, minutes are numbered from the epoch.
  it.each([
    ['a store that times windows', true],
    ['a store that cannot', false],
  ])(
    "asks a caller at most its minute's questions on %s, says when it may ask again, and keeps only live marks",
    async (_, timed) => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), async (steps) => {
          const clock = new FakeClock(1_000_000);
          const store = new KeptStore(clock);
          if (!timed) (store as { incrementWindow?: unknown }).incrementWindow = undefined;
          const limits = { max: 100, perCaller: 100, perCallerPerMinute: PER_MINUTE };
          const questions = new OperatorQuestions(store, () => clock.now(), 10, limits);
          const fields = { tool: 'deploy', server: 'local', level: 'L4' as const, reason: undefined };
          const asked: Asked[] = [];
          const minutes = new Map<string, { start: number; count: number }>();
          for (const [n, { caller, waitMs, modern }] of steps.entries()) {
            clock.advance(waitMs);
            const now = clock.now();
            let minute = minutes.get(caller);
            if (minute === undefined || now >= minute.start + 60_000) {
              minute = { start: timed ? now : Math.floor(now / 60_000) * 60_000, count: 0 };
              minutes.set(caller, minute);
            }
            const nonce = `nonce-${String(n).padStart(12, '0')}`;
            const via = modern ? 'input-required' : 'elicitation';
            const question = await questions.record(
              { ...fields, caller },
              via,
              TIMEOUT_MS,
              modern ? nonce : undefined,
              caller,
            );
            if (minute.count >= PER_MINUTE) {
              expect(question).toMatchObject({
                busy: 'rate',
                limit: PER_MINUTE,
                retryAfterMs: minute.start + 60_000 - now,
              });
              continue;
            }
            if (isBusy(question)) throw new Error(`refused within the minute's questions: ${JSON.stringify(question)}`);
            minute.count++;
            asked.push({ caller, at: now, modern });
            // Answered at once, as the attack does.
            if (modern) await questions.closeByNonce(nonce);
            else await questions.close(question);
          }
          // What stays: the nonce of each 2026-07-28 question whose state has not expired, and nothing else of any.
          const live = asked.filter((q) => q.modern && q.at + TIMEOUT_MS > clock.now()).length;
          expect(questionRecords(await store.kept())).toHaveLength(live);
          expect(await questions.pending()).toEqual([]);
        }),
        { numRuns: 150 },
      );
    },
  );
});
