import { EventEmitter } from 'node:events';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { countInWindow } from '@sluice/core';
import type { Store } from '@sluice/core';
import type { RiskLevel } from '../scoring/levels.js';
import type { StateBinding } from './request-state.js';
import { MAX_PENDING_APPROVALS } from './pending.js';
import { DEFAULT_MAX_QUESTIONS, DEFAULT_QUESTIONS_PER_CALLER, DEFAULT_QUESTIONS_PER_MINUTE } from './options.js';

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
  /** Its place in the list and in its caller's share, given back when it ends (absent: asked before there were places). */
  readonly places?: Places;
}

/** Where a waiting question sits: its place in the list, and in its caller's share. */
export interface Places {
  readonly list: number;
  /** SHA-256 of the caller that asked (its verified identity, or `anonymous`). */
  readonly owner: string;
  readonly share: number;
}

/**
 * How many questions may wait at once, over every replica sharing the store:
 * in all, and per caller; and how many one caller may be asked a minute.
 */
export interface QuestionLimits {
  readonly max: number;
  readonly perCaller: number;
  readonly perCallerPerMinute: number;
}

/**
 * Why a question was not asked: its caller already has its share waiting
 * (`caller`) or was asked its minute's questions (`rate`), or the list is full.
 */
export interface Busy {
  readonly busy: 'caller' | 'rate' | 'server';
  /** The share, the caller's questions a minute, or the list's size. */
  readonly limit: number;
  /**
   * Ms until a place is sure to free: the earliest lapse among the questions
   * holding the full share (the caller's own) or list, at least 1 and at most
   * the new question's timeout (which it also is when none could be read);
   * for `rate`, the end of the minute. An answer may free a place sooner.
   */
  readonly retryAfterMs: number;
  /**
   * The first such refusal of this caller (of anybody, for a full list) in
   * `BUSY_REPORT_MS`, over every replica: told to the listeners (and so the
   * audit log) once, however many refusals follow.
   */
  readonly first: boolean;
}

export function isBusy(value: unknown): value is Busy {
  return typeof value === 'object' && value !== null && 'busy' in value;
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
  | { readonly decision: 'lapsed'; readonly at: number };

/** Why an operator's answer was not taken. */
export type AnswerRefusal = 'unknown' | 'lapsed' | 'answered' | 'client';

/** The list's size unless `approval.questions.max` says otherwise: every waiting question is listed. */
export const MAX_LISTED_QUESTIONS = MAX_PENDING_APPROVALS;
/** A reason longer than this is cut. */
export const MAX_ANSWER_REASON_CHARS = 500;

const PREFIX = 'dev.sluice/risk/approval/';
const ID = /^([1-9][0-9]{0,14})-([A-Za-z0-9_-]{16})$/;
/**
 * An operator question's records are kept this long after it lapses, so that
 * a late answer (or a replica whose clock lags) learns it lapsed, or what was
 * decided, rather than that it never was. A client's question has none: once
 * its client answered, nothing reads it again (a 2026-07-28 state stays
 * single-use through its nonce's mark, kept until the state expires).
 */
const AFTERLIFE_MS = 60 * 60_000;
/**
 * The window of a caller's questions a minute: fixed, started by the caller's
 * first question and ended by the store's clock (on a store that cannot time
 * windows, numbered from the epoch by this replica's clock).
 */
const RATE_WINDOW_MS = 60_000;
/** A refusal past a share is told to the listeners once per caller in this long, however many follow. */
export const BUSY_REPORT_MS = 60_000;
/** The places of the list and of each caller's share: one key each, holding the question's id. */
const LIST = `${PREFIX}list/`;
const SHARE = `${PREFIX}share/`;
const BUSY = `${PREFIX}busy/`;
/** A caller's questions asked in its minute: a counter per caller, gone with its window. */
const RATE = `${PREFIX}rate/`;
/** Places are looked at this many at a time (read together), for a free one to claim. */
const PROBE = 16;
/** Reads of the list go to the store this many at a time. */
const READ_BATCH = 100;

const DEFAULT_LIMITS: QuestionLimits = Object.freeze({
  max: DEFAULT_MAX_QUESTIONS,
  perCaller: DEFAULT_QUESTIONS_PER_CALLER,
  perCallerPerMinute: DEFAULT_QUESTIONS_PER_MINUTE,
});

/**
 * The operator questions of every replica, kept in the server's store: one
 * record per question, its answer written once (`setIfAbsent`, so two
 * operators answering at once cannot both win), and a one-time claim so an
 * approval runs one call. A call waits on its own replica: an answer given
 * here wakes it at once, one given elsewhere is seen within `pollMs`.
 *
 * Every waiting question holds a place in the list (`limits.max` places)
 * and one in its caller's share (`limits.perCaller`): a key each, claimed
 * with `setIfAbsent` (so two replicas never take the same place), living as
 * long as the question and given back when it is answered, closed or lapses.
 * A question that finds no place is not asked ({@link Busy}), nor is one
 * past its caller's `limits.perCallerPerMinute`. The list is read from its
 * places, so a waiting question is listed however many others came and went
 * after it, and listing needs nothing but `get`.
 *
 * What a question leaves once it ends is bounded by its caller's questions a
 * minute: an operator question's records stay `AFTERLIFE_MS`; a client's
 * question's go when it is closed (a 2026-07-28 one leaves its nonce until
 * its state expires, and the approver the nonce's spent mark).
 */
export class OperatorQuestions {
  private readonly wake = new EventEmitter();

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly pollMs: number,
    private readonly limits: QuestionLimits = DEFAULT_LIMITS,
  ) {
    this.wake.setMaxListeners(0);
  }

  /**
   * The live question for this exact call, joined (`joined: true`), or a new
   * one. An identical call (same caller, tool and arguments) while one waits
   * is joined to it instead of asking twice, and takes no place. The
   * binding's principal is the caller whose share a new question takes.
   */
  async ask(
    binding: StateBinding,
    fields: Omit<OperatorQuestion, 'id' | 'call' | 'since' | 'expiresAt' | 'via' | 'places'>,
    timeoutMs: number,
  ): Promise<{ readonly question: OperatorQuestion; readonly joined: boolean } | Busy> {
    const call = callKey(binding);
    const now = this.now();
    const existing = await this.store.get<string>(`${PREFIX}call/${call}`);
    if (typeof existing === 'string') {
      const question = await this.find(existing);
      if (question !== undefined && question.call === call && question.expiresAt > now && !(await this.spent(question)))
        return { question, joined: true };
    }
    const question = await this.create({ ...fields, via: 'operator', call }, timeoutMs, binding.principal);
    if (isBusy(question)) return question;
    await this.store.set(`${PREFIX}call/${call}`, question.id, { ttlMs: timeoutMs });
    return { question, joined: false };
  }

  /**
   * Lists a question the client answers, so that every replica shows it;
   * `nonce`: the 2026-07-28 state's, by which the retry that answers it (on
   * any replica) finds it; `owner`: the caller whose share it takes (its
   * verified identity; every unauthenticated caller is `anonymous`).
   */
  async record(
    fields: Omit<OperatorQuestion, 'id' | 'call' | 'since' | 'expiresAt' | 'via' | 'message' | 'places'>,
    via: 'elicitation' | 'input-required',
    timeoutMs: number,
    nonce?: string,
    owner = 'anonymous',
  ): Promise<OperatorQuestion | Busy> {
    const question = await this.create({ ...fields, message: '', via, call: '' }, timeoutMs, owner);
    if (isBusy(question)) return question;
    // As long as the state: a later retry is refused as expired before it looks here. It names the question
    // the retry answers (or replays: its refusal is told with the question's id).
    if (nonce !== undefined) await this.store.set(`${PREFIX}nonce/${nonce}`, question.id, { ttlMs: timeoutMs });
    return question;
  }

  /**
   * A client's question is over: its record goes (nothing reads it again: its
   * answer came with the call that asked, or the retry that closes it), so it
   * leaves every replica's list and gives its places back. Twice is harmless.
   */
  async close(question: OperatorQuestion): Promise<void> {
    if (await this.store.delete(this.recordKey(question))) await this.release(question);
  }

  /** The client's 2026-07-28 question with this state nonce is over (answered, or refused). */
  async closeByNonce(nonce: string): Promise<string | undefined> {
    const id = await this.store.get<string>(`${PREFIX}nonce/${nonce}`);
    if (typeof id !== 'string') return undefined;
    const question = await this.find(id);
    if (question !== undefined) await this.close(question);
    return id;
  }

  /**
   * A new question, in a place of its caller's share and one of the list,
   * each held as long as the question lives, and counted in its caller's
   * minute; or why there was none.
   */
  private async create(
    fields: Omit<OperatorQuestion, 'id' | 'since' | 'expiresAt' | 'places'>,
    timeoutMs: number,
    caller: string,
  ): Promise<OperatorQuestion | Busy> {
    const now = this.now();
    const owner = ownerKey(caller);
    // Read first, so that a caller refused for its minute costs one read, and only questions asked count.
    const asked = await countInWindow(this.store, `${RATE}${owner}`, RATE_WINDOW_MS, 0, now);
    if (asked.count >= this.limits.perCallerPerMinute) return await this.busy('rate', owner, asked.resetMs);
    const sequence = await this.store.increment(`${PREFIX}seq`);
    const id = `${sequence}-${randomBytes(12).toString('base64url')}`;
    // Claimed after `now`, with the question's whole lifetime: a place never lapses before its question.
    const share = await this.take(`${SHARE}${owner}/`, this.limits.perCaller, id, timeoutMs);
    if (typeof share !== 'number') return await this.busy('caller', owner, await this.lapseOf(share, timeoutMs));
    const list = await this.take(LIST, this.limits.max, id, timeoutMs);
    if (typeof list !== 'number') {
      await this.free(`${SHARE}${owner}/${share}`, id);
      return await this.busy('server', '*', await this.lapseOf(list, timeoutMs));
    }
    const places: Places = { list, owner, share };
    // Counted once placed: of two replicas asking for one caller at once, the one past the minute gives up.
    const counted = await countInWindow(this.store, `${RATE}${owner}`, RATE_WINDOW_MS, 1, now);
    if (counted.count > this.limits.perCallerPerMinute) {
      await this.release({ id, places });
      return await this.busy('rate', owner, counted.resetMs);
    }
    const question: OperatorQuestion = { ...fields, id, since: now, expiresAt: now + timeoutMs, places };
    const ttlMs = fields.via === 'operator' ? timeoutMs + AFTERLIFE_MS : timeoutMs;
    await this.store.set(this.recordKey(question), question, { ttlMs });
    return question;
  }

  /**
   * Claims a free place among `count` under `prefix` for `id`, looking at
   * them a window at a time from a random one (read together, then claimed
   * one by one with `setIfAbsent`); when every place is taken, the ids of
   * the questions seen holding them.
   */
  private async take(prefix: string, count: number, id: string, ttlMs: number): Promise<number | string[]> {
    const start = randomInt(count);
    const holders: string[] = [];
    for (let seen = 0; seen < count; seen += PROBE) {
      const places = Array.from({ length: Math.min(PROBE, count - seen) }, (_, k) => (start + seen + k) % count);
      const held = await Promise.all(places.map((place) => this.store.get(`${prefix}${place}`)));
      for (const [k, place] of places.entries()) {
        const holder = held[k];
        if (holder === undefined && (await this.store.setIfAbsent(`${prefix}${place}`, id, { ttlMs }))) return place;
        if (typeof holder === 'string') holders.push(holder);
      }
    }
    return holders;
  }

  /**
   * Whether this is the first time `owner` joins `question` (fleet-wide), so
   * that a caller repeating an identical call is told to the listeners (and
   * written to the audit log) once per question, not once per call.
   */
  async firstJoin(question: OperatorQuestion, owner: string): Promise<boolean> {
    const ttlMs = Math.max(1, question.expiresAt - this.now());
    return this.store.setIfAbsent(`${PREFIX}joined/${question.id}/${owner}`, 1, { ttlMs });
  }

  /**
   * A refusal for want of a place or of the caller's minute, to call again in
   * `retryAfterMs`; `first` once per `BUSY_REPORT_MS` per caller (`*`: the
   * list), fleet-wide.
   */
  private async busy(kind: Busy['busy'], owner: string, retryAfterMs: number): Promise<Busy> {
    const first = await this.store.setIfAbsent(`${BUSY}${owner}`, 1, { ttlMs: BUSY_REPORT_MS });
    const { perCaller, perCallerPerMinute, max } = this.limits;
    const limit = { caller: perCaller, rate: perCallerPerMinute, server: max }[kind];
    return { busy: kind, limit, first, retryAfterMs };
  }

  /** Ms until the earliest of `holders` lapses, at least 1 and at most `timeoutMs` (also when none can be read). */
  private async lapseOf(holders: readonly string[], timeoutMs: number): Promise<number> {
    const lapse = await this.earliestLapse(holders);
    // Bounded: a question asked by a replica whose clock runs far ahead cannot make a caller wait past its own timeout.
    return lapse === undefined ? timeoutMs : Math.min(timeoutMs, Math.max(1, Math.ceil(lapse - this.now())));
  }

  /** When the first of these questions lapses (epoch ms), read from their records a batch at a time. */
  private async earliestLapse(ids: readonly string[]): Promise<number | undefined> {
    let earliest: number | undefined;
    for (let first = 0; first < ids.length; first += READ_BATCH) {
      const found = await Promise.all(ids.slice(first, first + READ_BATCH).map((id) => this.find(id)));
      for (const question of found)
        if (question !== undefined && (earliest === undefined || question.expiresAt < earliest))
          earliest = question.expiresAt;
    }
    return earliest;
  }

  /** Gives a question's places back (those it still holds: a place whose TTL ran out may be another's now). */
  private async release(question: Pick<OperatorQuestion, 'id' | 'places'>): Promise<void> {
    const places = question.places;
    if (places === undefined) return;
    await Promise.all([
      this.free(`${LIST}${places.list}`, question.id),
      this.free(`${SHARE}${places.owner}/${places.share}`, question.id),
    ]);
  }

  /**
   * Frees a place if `id` still holds it, by compare-and-delete: read then
   * delete would free a newer question's place when this one's lapsed in
   * between (a release from a replica whose clock lags, or a slow one).
   */
  private async free(key: string, id: string): Promise<void> {
    await this.store.compareAndDelete(key, id);
  }

  /** The question with this id, or undefined (never asked, malformed, or long gone). */
  async find(id: string): Promise<OperatorQuestion | undefined> {
    const sequence = sequenceOf(id);
    if (sequence === undefined) return undefined;
    const question = await this.store.get<OperatorQuestion>(`${PREFIX}q/${sequence}`);
    return question?.id === id ? question : undefined;
  }

  /** Whether the question with this id still waits: asked, not lapsed, not answered. Two reads, whatever the list holds. */
  async waiting(id: string): Promise<boolean> {
    const question = await this.find(id);
    return question !== undefined && question.expiresAt > this.now() && (await this.answerOf(question)) === undefined;
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
    await this.release(question);
    return { ok: true, question };
  }

  /** Marks an unanswered question lapsed; resolves with what stands (an answer that came first wins) and whether this lapsed it. */
  async lapse(question: OperatorQuestion): Promise<{ answer: QuestionAnswer; lapsedNow: boolean }> {
    const lapsed: QuestionAnswer = { decision: 'lapsed', at: this.now() };
    if (await this.store.setIfAbsent(this.answerKey(question), lapsed, { ttlMs: AFTERLIFE_MS })) {
      await this.release(question);
      return { answer: lapsed, lapsedNow: true };
    }
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
    // Only this question's join key: an identical call may have asked a newer question since.
    if (first) await this.store.compareAndDelete(`${PREFIX}call/${question.call}`, question.id);
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
   * Every unanswered, unexpired question of every replica, read from the
   * list's places, oldest first: operator questions and the ones clients
   * answer. However many questions came and went since, a waiting one is here.
   */
  async pending(): Promise<OperatorQuestion[]> {
    const now = this.now();
    const shown: OperatorQuestion[] = [];
    for (let first = 0; first < this.limits.max; first += READ_BATCH) {
      const places = Array.from({ length: Math.min(READ_BATCH, this.limits.max - first) }, (_, k) => first + k);
      const read = await Promise.all(
        places.map(async (place) => {
          const id = await this.store.get(`${LIST}${place}`);
          if (typeof id !== 'string') return undefined;
          const question = await this.find(id);
          if (question === undefined || question.expiresAt <= now) return undefined;
          return (await this.answerOf(question)) === undefined ? question : undefined;
        }),
      );
      for (const question of read) if (question !== undefined) shown.push(question);
    }
    return shown.sort((a, b) => a.since - b.since || (sequenceOf(a.id) ?? 0) - (sequenceOf(b.id) ?? 0));
  }

  private async spent(question: OperatorQuestion): Promise<boolean> {
    return (await this.store.get(`${PREFIX}spent/${sequenceOf(question.id) ?? 0}`)) !== undefined;
  }

  private answerKey(question: OperatorQuestion): string {
    return `${PREFIX}a/${sequenceOf(question.id) ?? 0}`;
  }

  private recordKey(question: OperatorQuestion): string {
    return `${PREFIX}q/${sequenceOf(question.id) ?? 0}`;
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

/** The store's name for a caller's share: a digest, whatever the caller's name is made of. */
function ownerKey(caller: string): string {
  return createHash('sha256').update(caller, 'utf8').digest('base64url');
}

/** What an identical call shares: the caller, the tool, its source, its arguments and its definition. */
export function callKey(binding: StateBinding): string {
  return createHash('sha256')
    .update(JSON.stringify([binding.principal, binding.tool, binding.server, binding.args, binding.fingerprint]))
    .digest('base64url');
}
