import { EventEmitter } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '@sluice/core';
import type { RiskLevel } from '../scoring/levels.js';
import type { StateBinding } from './request-state.js';
import { MAX_PENDING_APPROVALS } from './pending.js';

/** Where an operator answered from. */
export const OPERATOR_VIAS = ['console', 'api', 'cli', 'webhook'] as const;
export type OperatorVia = (typeof OPERATOR_VIAS)[number];

/** A question an operator answers, as every replica sees it in the store: never the arguments. */
export interface OperatorQuestion {
  /** `<sequence>-<random>`: names the question in the console, the admin API and a sealed state. */
  readonly id: string;
  readonly tool: string;
  readonly server: string;
  readonly level: RiskLevel;
  readonly reason: string | undefined;
  /** The verified caller's subject, when the listener authenticated the call. */
  readonly caller: string | undefined;
  readonly since: number;
  readonly expiresAt: number;
  /** What the operator reads: the approval form's text (arguments masked and capped). Empty for a client's question. */
  readonly message: string;
  /** Who answers: an `operator`, or the client (asked by `elicitation` or an `input-required` round). */
  readonly via: 'operator' | 'elicitation' | 'input-required';
  /** SHA-256 of the call it approves (caller, tool, source, canonical arguments, definition). */
  readonly call: string;
}

/** What happened to a question: answered by an operator, or lapsed unanswered. */
export type QuestionAnswer =
  | {
      readonly decision: 'approved' | 'denied';
      /** The operator's verified identity (an API key's name or a token's subject). */
      readonly by: string;
      readonly via: OperatorVia;
      readonly reason: string | undefined;
      readonly at: number;
    }
  | { readonly decision: 'lapsed'; readonly at: number }
  /** A client's question, over: its client answered (or the wait ended). */
  | { readonly decision: 'settled'; readonly at: number };

/** Why an operator's answer was not taken. */
export type AnswerRefusal = 'unknown' | 'lapsed' | 'answered' | 'client';

/** At most this many most recent questions are looked at when listing. */
export const MAX_LISTED_QUESTIONS = MAX_PENDING_APPROVALS;
/** A reason longer than this is cut. */
export const MAX_ANSWER_REASON_CHARS = 500;

const PREFIX = 'dev.sluice/risk/approval/';
const ID = /^([1-9][0-9]{0,14})-([A-Za-z0-9_-]{16})$/;
/** Kept this long after a question lapses, so that a late retry learns it lapsed rather than that it never was. */
const AFTERLIFE_MS = 60 * 60_000;

/**
 * The operator questions of every replica, kept in the server's store: one
 * record per question, its answer written once (`setIfAbsent`, so two
 * operators answering at once cannot both win), and a one-time claim so an
 * approval runs one call. Found by a sequence number, so listing needs
 * nothing but `get`. A call waits on its own replica: an answer given here
 * wakes it at once, one given elsewhere is seen within `pollMs`.
 */
export class OperatorQuestions {
  private readonly wake = new EventEmitter();

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly pollMs: number,
  ) {
    this.wake.setMaxListeners(0);
  }

  /**
   * The live question for this exact call, joined (`joined: true`), or a new
   * one. An identical call (same caller, tool and arguments) while one waits
   * is joined to it instead of asking twice.
   */
  async ask(
    binding: StateBinding,
    fields: Omit<OperatorQuestion, 'id' | 'call' | 'since' | 'expiresAt' | 'via'>,
    timeoutMs: number,
  ): Promise<{ readonly question: OperatorQuestion; readonly joined: boolean }> {
    const call = callKey(binding);
    const now = this.now();
    const existing = await this.store.get<string>(`${PREFIX}call/${call}`);
    if (typeof existing === 'string') {
      const question = await this.find(existing);
      if (question !== undefined && question.call === call && question.expiresAt > now && !(await this.spent(question)))
        return { question, joined: true };
    }
    const question = await this.create({ ...fields, via: 'operator', call }, timeoutMs);
    await this.store.set(`${PREFIX}call/${call}`, question.id, { ttlMs: timeoutMs });
    return { question, joined: false };
  }

  /**
   * Lists a question the client answers, so that every replica shows it;
   * `nonce`: the 2026-07-28 state's, by which the retry that answers it (on
   * any replica) finds it.
   */
  async record(
    fields: Omit<OperatorQuestion, 'id' | 'call' | 'since' | 'expiresAt' | 'via' | 'message'>,
    via: 'elicitation' | 'input-required',
    timeoutMs: number,
    nonce?: string,
  ): Promise<OperatorQuestion> {
    const question = await this.create({ ...fields, message: '', via, call: '' }, timeoutMs);
    if (nonce !== undefined)
      await this.store.set(`${PREFIX}nonce/${nonce}`, question.id, { ttlMs: timeoutMs + AFTERLIFE_MS });
    return question;
  }

  /** A client's question is over: it leaves every replica's list. */
  async close(question: OperatorQuestion): Promise<void> {
    const at = this.now();
    await this.store.setIfAbsent(this.answerKey(question), { decision: 'settled', at }, { ttlMs: AFTERLIFE_MS });
  }

  /** The client's 2026-07-28 question with this state nonce is over (answered, or refused). */
  async closeByNonce(nonce: string): Promise<string | undefined> {
    const id = await this.store.get<string>(`${PREFIX}nonce/${nonce}`);
    if (typeof id !== 'string') return undefined;
    const question = await this.find(id);
    if (question !== undefined) await this.close(question);
    return id;
  }

  private async create(
    fields: Omit<OperatorQuestion, 'id' | 'since' | 'expiresAt'>,
    timeoutMs: number,
  ): Promise<OperatorQuestion> {
    const sequence = await this.store.increment(`${PREFIX}seq`);
    const now = this.now();
    const question: OperatorQuestion = {
      ...fields,
      id: `${sequence}-${randomBytes(12).toString('base64url')}`,
      since: now,
      expiresAt: now + timeoutMs,
    };
    await this.store.set(`${PREFIX}q/${sequence}`, question, { ttlMs: timeoutMs + AFTERLIFE_MS });
    return question;
  }

  /** The question with this id, or undefined (never asked, malformed, or long gone). */
  async find(id: string): Promise<OperatorQuestion | undefined> {
    const sequence = sequenceOf(id);
    if (sequence === undefined) return undefined;
    const question = await this.store.get<OperatorQuestion>(`${PREFIX}q/${sequence}`);
    return question?.id === id ? question : undefined;
  }

  async answerOf(question: OperatorQuestion): Promise<QuestionAnswer | undefined> {
    return await this.store.get<QuestionAnswer>(`${PREFIX}a/${sequenceOf(question.id) ?? 0}`);
  }

  /**
   * Records an operator's answer, once: the first answer stands, a later one
   * (or one after the question lapsed) is refused.
   */
  async answer(
    id: string,
    answer: Omit<Extract<QuestionAnswer, { decision: 'approved' | 'denied' }>, 'at'>,
  ): Promise<{ ok: true; question: OperatorQuestion } | { ok: false; why: AnswerRefusal }> {
    const question = await this.find(id);
    if (question === undefined) return { ok: false, why: 'unknown' };
    if (question.via !== 'operator') return { ok: false, why: 'client' };
    const now = this.now();
    if (now >= question.expiresAt) {
      await this.lapse(question);
      return { ok: false, why: 'lapsed' };
    }
    const reason = answer.reason === undefined ? undefined : answer.reason.slice(0, MAX_ANSWER_REASON_CHARS);
    const written = await this.store.setIfAbsent(
      this.answerKey(question),
      { ...answer, reason, at: now },
      { ttlMs: question.expiresAt - now + AFTERLIFE_MS },
    );
    if (!written) return { ok: false, why: 'answered' };
    this.wake.emit(id);
    return { ok: true, question };
  }

  /** Marks an unanswered question lapsed; resolves with what stands (an answer that came first wins) and whether this lapsed it. */
  async lapse(question: OperatorQuestion): Promise<{ answer: QuestionAnswer; lapsedNow: boolean }> {
    const lapsed: QuestionAnswer = { decision: 'lapsed', at: this.now() };
    if (await this.store.setIfAbsent(this.answerKey(question), lapsed, { ttlMs: AFTERLIFE_MS }))
      return { answer: lapsed, lapsedNow: true };
    return { answer: (await this.answerOf(question)) ?? lapsed, lapsedNow: false };
  }

  /**
   * Makes this waiter the one an approval runs for: the latest identical
   * call to wait in-process takes the question over (a client that
   * reconnected and called again), so the call whose client went away does
   * not run in its place. Resolves with the waiter's turn.
   */
  async hold(question: OperatorQuestion): Promise<string> {
    const turn = randomBytes(12).toString('base64url');
    const ttlMs = Math.max(1, question.expiresAt - this.now()) + AFTERLIFE_MS;
    await this.store.set(`${PREFIX}h/${sequenceOf(question.id) ?? 0}`, turn, { ttlMs });
    return turn;
  }

  /** Whether `turn` is still the waiter an approval runs for. */
  async holds(question: OperatorQuestion, turn: string): Promise<boolean> {
    return (await this.store.get(`${PREFIX}h/${sequenceOf(question.id) ?? 0}`)) === turn;
  }

  /**
   * Takes the one run an approval allows; true for the first taker only.
   * The call's join key goes too, so the next identical call asks afresh.
   */
  async claim(question: OperatorQuestion): Promise<boolean> {
    const ttlMs = Math.max(1, question.expiresAt - this.now()) + AFTERLIFE_MS;
    const first = await this.store.setIfAbsent(`${PREFIX}spent/${sequenceOf(question.id) ?? 0}`, 1, { ttlMs });
    if (first && (await this.store.get(`${PREFIX}call/${question.call}`)) === question.id)
      await this.store.delete(`${PREFIX}call/${question.call}`);
    return first;
  }

  /**
   * Waits for the answer until `until` (epoch ms) or the signal; undefined
   * when none came in time. Answers given on this replica wake it at once.
   */
  async wait(question: OperatorQuestion, until: number, signal?: AbortSignal): Promise<QuestionAnswer | undefined> {
    for (;;) {
      const answer = await this.answerOf(question);
      if (answer !== undefined) return answer;
      const left = until - this.now();
      if (left <= 0 || signal?.aborted === true) return undefined;
      await this.nap(question.id, Math.min(left, this.pollMs), signal);
    }
  }

  /**
   * Unanswered, unexpired questions of every replica (among the latest
   * `MAX_LISTED_QUESTIONS`), oldest first: operator questions and the ones
   * clients answer.
   */
  async pending(): Promise<OperatorQuestion[]> {
    const last = await this.store.get<number>(`${PREFIX}seq`);
    if (typeof last !== 'number') return [];
    const now = this.now();
    const shown: OperatorQuestion[] = [];
    for (let sequence = Math.max(1, last - MAX_LISTED_QUESTIONS + 1); sequence <= last; sequence++) {
      const question = await this.store.get<OperatorQuestion>(`${PREFIX}q/${sequence}`);
      if (question === undefined || question.expiresAt <= now) continue;
      if ((await this.store.get(`${PREFIX}a/${sequence}`)) !== undefined) continue;
      shown.push(question);
    }
    return shown;
  }

  private async spent(question: OperatorQuestion): Promise<boolean> {
    return (await this.store.get(`${PREFIX}spent/${sequenceOf(question.id) ?? 0}`)) !== undefined;
  }

  private answerKey(question: OperatorQuestion): string {
    return `${PREFIX}a/${sequenceOf(question.id) ?? 0}`;
  }

  private nap(id: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake.off(id, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake.on(id, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/** The sequence number inside a question id, or undefined when the id is not one of ours. */
function sequenceOf(id: string): number | undefined {
  const match = ID.exec(id);
  return match === null ? undefined : Number(match[1]);
}

/** What an identical call shares: the caller, the tool, its source, its arguments and its definition. */
export function callKey(binding: StateBinding): string {
  return createHash('sha256')
    .update(JSON.stringify([binding.principal, binding.tool, binding.server, binding.args, binding.fingerprint]))
    .digest('base64url');
}
