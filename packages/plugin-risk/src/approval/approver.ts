import { createHash } from 'node:crypto';
import { callerKeyOf, isCarriedRound, isContinuedRound, messageOf, wireStateOf } from '@sluice/core';
import type {
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  CallContext,
  Logger,
  ServerContext,
  Store,
} from '@sluice/core';
import { z } from 'zod';
import type { ApprovalConfig } from './options.js';
import { APPROVAL_INPUT_KEY, APPROVE_FIELD, approvalForm } from './form.js';
import { RiskEvent, logApprovalDecided, logApprovalRequested } from '../events.js';
import type { ApprovalTarget } from './targets.js';
import type { RequestStateCodec, StateBinding } from './request-state.js';
import { argumentsDigest } from './request-state.js';
import type { PendingApproval } from './pending.js';
import type {
  AnswerRefusal,
  Busy,
  OperatorQuestion,
  OperatorQuestions,
  OperatorVia,
  QuestionAnswer,
} from './questions.js';
import { MAX_ANSWER_REASON_CHARS, callKey, isBusy } from './questions.js';
import type { ApprovalEvent, ApprovalEventSubject, ApprovalEvents } from './approval-events.js';

/** The input-required answer of a 2026-07-28 approval round. */
export type InputRequired = Extract<ApprovalDecision, { reason: 'input-required' }>['result'];
type Refused = Extract<ApprovalDecision, { approved: false; detail?: string }>;

/**
 * Nobody was asked: the caller already has its share of questions waiting,
 * or was asked its minute's questions, or the list is full. To
 * `ctx.approve()` it is `unsupported`; the gate refuses it with `APPROVAL_BUSY`.
 */
export interface BusyDecision {
  readonly approved: false;
  readonly reason: 'unsupported';
  readonly detail: string;
  readonly busy: Busy['busy'];
  readonly limit: number;
  /** Ms until a place is sure to free (the earliest of the full share's or list's questions lapses, or the minute ends). */
  readonly retryAfterMs: number;
}

export function isBusyDecision(decision: ApprovalDecision): decision is BusyDecision {
  return !decision.approved && 'busy' in decision;
}

export interface ApproverDeps {
  readonly codec: RequestStateCodec;
  /** Where single-use nonces are consumed: the server's store, shared between replicas on Redis. */
  readonly store: Store;
  readonly now: () => number;
  readonly config: ApprovalConfig;
  /** The plugin's logger (secrets masked). */
  readonly logger: Logger;
  readonly targetOf: (ctx: CallContext) => ApprovalTarget;
  readonly mask: (text: string) => string;
  /** Every replica's questions, in the store: the operator's, and the ones clients answer, listed while they wait. */
  readonly questions: OperatorQuestions;
  /** Where asked, answered, lapsed and refused approvals are told. */
  readonly events: ApprovalEvents;
}

const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const NONCE_PREFIX = 'dev.sluice/risk/approval-nonce/';
/**
 * How much longer than its state a nonce's spent mark is kept. Each replica
 * judges a state's expiry by its own clock: one whose clock lags the replica
 * that spent the state still takes it for live after the spender thought it
 * expired. The mark outlives that by this much: a state works once unless
 * the spender's clock is ahead of another replica's by more than
 * `timeoutMs` and these five minutes, the skew Kerberos tolerates (a caller's
 * marks stay bounded: they live about 15 minutes at the defaults).
 */
const SPENT_MARK_SLACK_MS = 5 * 60_000;
/** A reason longer than this is cut in the lists. */
const MAX_REASON_CHARS = 200;
/** A nonce whose question was answered... */
const USED = 1;
/** ...with an approval, which a continued round of the same call may rely on. */
const GRANTED = 2;

const AnswerSchema = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Asks a person, the way the client's protocol version allows. On
 * 2025-11-25 the server sends `elicitation/create` and waits (up to
 * `timeoutMs`). On 2026-07-28 the first round answers with an input-required
 * result whose sealed `requestState` binds the question to this caller, tool,
 * arguments and definition; the retry carries the person's answer, the state
 * is verified, and its nonce is consumed once through the store. Registered
 * under `Tokens.Approver`, so `ctx.approve()` is this.
 */
export class RiskApprover implements Approver {
  constructor(private readonly deps: ApproverDeps) {}

  /** Whether the question with this id still waits for an answer, on any replica. */
  waiting(id: string): Promise<boolean> {
    return this.deps.questions.waiting(id);
  }

  /** The questions nobody has answered yet; a 2026-07-28 one answered on another replica leaves. */
  async pending(): Promise<PendingApproval[]> {
    return (await this.deps.questions.pending()).map((question): PendingApproval => ({
      id: question.id,
      tool: question.tool,
      server: question.server,
      level: question.level,
      reason: question.reason,
      via: question.via,
      caller: question.caller,
      since: question.since,
      expiresAt: question.expiresAt,
      ...(question.via === 'operator' ? { message: question.message } : {}),
    }));
  }

  /**
   * An operator's answer to a question of this approver's store, told to the
   * listeners; `unknown` when the store has no such question.
   */
  async answer(
    id: string,
    answer: { decision: 'approved' | 'denied'; by: string; via: OperatorVia; reason: string | undefined },
  ): Promise<{ ok: true } | { ok: false; why: AnswerRefusal }> {
    const reason = answer.reason === undefined ? undefined : this.deps.mask(answer.reason);
    const taken = await this.deps.questions.answer(id, { ...answer, reason });
    if (!taken.ok) return taken;
    const { question } = taken;
    this.deps.events.emit({
      id,
      channel: 'operator',
      tool: question.tool,
      server: question.server,
      level: question.level,
      caller: question.caller,
      at: this.deps.now(),
      kind: 'answered',
      decision: answer.decision,
      by: answer.by,
      via: answer.via,
      reason: reason?.slice(0, MAX_ANSWER_REASON_CHARS),
    });
    this.deps.logger.info(
      {
        event: RiskEvent.APPROVAL_ANSWERED,
        id,
        tool: question.tool,
        server: question.server,
        decision: answer.decision,
        by: answer.by,
        via: answer.via,
      },
      `operator ${answer.by} ${answer.decision} "${question.tool}"`,
    );
    return { ok: true };
  }

  async approve(ctx: CallContext, request: ApprovalRequest): Promise<ApprovalDecision> {
    const target = this.deps.targetOf(ctx);
    const decision = await this.decide(ctx, request, target);
    // A refusal past a share is logged (once a minute at warn) where it is made, not once per call here.
    if (decision.approved || (decision.reason !== 'input-required' && !isBusyDecision(decision)))
      logApprovalDecided(this.deps.logger, target, decision);
    return decision;
  }

  private async decide(ctx: CallContext, request: ApprovalRequest, target: ApprovalTarget): Promise<ApprovalDecision> {
    if (target.channel === 'operator') return this.byOperator(ctx, request, target, false);
    // A 2026-07-28 retry that names an operator question comes after the client's person approved.
    if (target.channel === 'client-then-operator' && this.namesQuestion(ctx, target))
      return this.byOperator(ctx, request, target, false);
    const client = await this.byClient(ctx, request, target);
    if (target.channel === 'client' || !client.approved) return client;
    return this.byOperator(ctx, request, target, true);
  }

  /** The person at the client answers: the decision, told to the event listeners. */
  private async byClient(
    ctx: CallContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
  ): Promise<ApprovalDecision> {
    const mcp = ctx.mcp;
    const trace: ClientTrace = { via: mcp !== undefined && isModern(mcp) ? 'input-required' : 'elicitation' };
    const decision =
      mcp === undefined
        ? unsupported('the call did not come from an MCP client, so nobody can be asked')
        : isModern(mcp)
          ? await this.overRoundTrip(ctx, mcp, request, target, trace)
          : await this.byElicitation(ctx, mcp, request, target, trace);
    const subject = { ...this.subjectOf(ctx, target, 'client'), ...(trace.id === undefined ? {} : { id: trace.id }) };
    if (decision.approved || decision.reason === 'declined' || decision.reason === 'cancelled')
      this.tell(ctx, {
        ...subject,
        kind: 'answered',
        decision: decision.approved ? 'approved' : 'denied',
        by: 'client',
        via: trace.via,
        reason: decision.approved ? undefined : decision.reason,
      });
    else if (decision.reason === 'timeout') this.tell(ctx, { ...subject, kind: 'lapsed' });
    else if (isBusyDecision(decision)) return decision;
    else if (decision.reason === 'invalid' || decision.reason === 'unsupported')
      this.tell(ctx, {
        ...subject,
        kind: 'refused',
        code: decision.reason,
        why: decision.detail ?? decision.reason,
      });
    return decision;
  }

  /** Whether this 2026-07-28 retry carries a state (verified later) that names an operator question. */
  private namesQuestion(ctx: CallContext, target: ApprovalTarget): boolean {
    const mcp = ctx.mcp;
    if (mcp === undefined || !isModern(mcp) || !isCarriedRound(ctx)) return false;
    const check = this.deps.codec.check(mcp.mcpReq.requestState(), this.operatorBinding(ctx, target), this.deps.now());
    return check.ok && check.question !== undefined;
  }

  /**
   * An operator answers; the client never can. A 2026-07-28 call gets an
   * input-required round whose sealed state names the question, and may
   * retry with it (here or on any replica) until the question lapses: each
   * retry waits up to `holdMs` for the answer, then says "still waiting"
   * with the same state. Any other call (2025-11-25, a call made by another
   * tool) waits here, up to the timeout. `fresh`: ask even though the retry
   * carries a state (the client's, just spent).
   */
  private async byOperator(
    ctx: CallContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
    fresh: boolean,
  ): Promise<ApprovalDecision> {
    const binding = this.operatorBinding(ctx, target);
    const mcp = ctx.mcp;
    // A nested call whose caller carries its rounds (a code-mode script) pauses the same way: its caller retries.
    if (mcp !== undefined && isModern(mcp) && isCarriedRound(ctx)) {
      const state = fresh ? undefined : mcp.mcpReq.requestState();
      if (state === undefined) {
        const question = await this.askOperator(ctx, request, target, binding);
        return isBusy(question) ? this.busy(ctx, target, 'operator', question) : this.stillWaiting(binding, question);
      }
      return this.retryOperator(ctx, target, binding, state);
    }
    const question = await this.askOperator(ctx, request, target, binding);
    if (isBusy(question)) return this.busy(ctx, target, 'operator', question);
    const turn = await this.deps.questions.hold(question);
    const answer = await this.deps.questions.wait(question, question.expiresAt, ctx.signal);
    if (answer !== undefined) return this.settle(ctx, target, question, answer, turn);
    if (ctx.signal.aborted)
      return { approved: false, reason: 'cancelled', detail: 'the call ended while it waited for an operator' };
    return this.lapse(ctx, target, question);
  }

  private async retryOperator(
    ctx: CallContext,
    target: ApprovalTarget,
    binding: StateBinding,
    state: unknown,
  ): Promise<ApprovalDecision> {
    const check = this.deps.codec.check(state, binding, this.deps.now());
    const refuse = (detail: string): Refused => {
      this.tell(ctx, {
        ...this.subjectOf(ctx, target, 'operator'),
        kind: 'refused',
        code: 'invalid',
        why: detail,
      });
      return invalid(detail);
    };
    if (!check.ok) {
      if (check.why === 'expired')
        return { approved: false, reason: 'timeout', detail: 'the operator did not answer in time' };
      return refuse(
        check.why === 'other-call'
          ? 'the approval state belongs to another call'
          : 'the approval state was altered or is not ours',
      );
    }
    // A client's own answer never approves an operator's question: only a state naming one is waited on.
    if (check.question === undefined)
      return refuse('only an operator can approve this tool: the state carries no operator question');
    const question = await this.deps.questions.find(check.question);
    if (question === undefined || question.call !== callKey(binding))
      return refuse('the operator question named by the state is unknown');
    // The client answered a question it was never asked: not an answer; told to the audit trail, then ignored.
    if (ctx.mcp?.mcpReq.inputResponses?.[APPROVAL_INPUT_KEY] !== undefined)
      this.tell(ctx, {
        ...this.subjectOf(ctx, target, 'operator'),
        id: question.id,
        kind: 'refused',
        code: 'ignored',
        why: "the client answered an operator's question: ignored",
      });
    const until = Math.min(this.deps.now() + this.deps.config.operator.holdMs, question.expiresAt);
    const answer = await this.deps.questions.wait(question, until, ctx.signal);
    if (answer !== undefined) return this.settle(ctx, target, question, answer);
    if (this.deps.now() >= question.expiresAt) return this.lapse(ctx, target, question);
    return this.stillWaiting(binding, question, state as string);
  }

  /**
   * The live question for this call (joined when an identical call already
   * waits), told to the listeners when new; or why none could be asked.
   */
  private async askOperator(
    ctx: CallContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
    binding: StateBinding,
  ): Promise<OperatorQuestion | Busy> {
    const fields = {
      tool: target.tool,
      server: target.server,
      level: target.level,
      reason: request.reason === undefined ? undefined : this.deps.mask(request.reason).slice(0, MAX_REASON_CHARS),
      caller: ctx.auth?.subject,
      message: request.message,
    };
    const asked = await this.deps.questions.ask(binding, fields, this.deps.config.timeoutMs);
    if (isBusy(asked)) return asked;
    const { question, joined } = asked;
    if (!joined) logApprovalRequested(this.deps.logger, target, 'operator');
    // A caller repeating an identical call (a stateless client retrying its first round) joins it each time: it is
    // told to the listeners, and so to the audit log, the first time only.
    else if (!(await this.deps.questions.firstJoin(question, ownerOf(ctx)))) return question;
    this.tell(ctx, {
      ...this.subjectOf(ctx, target, 'operator'),
      id: question.id,
      kind: 'asked',
      joined,
      reason: question.reason,
      message: question.message,
      expiresAt: question.expiresAt,
    });
    return question;
  }

  /**
   * Nobody is asked: the caller's share of waiting questions (or the whole
   * list) is full, or the caller was asked its minute's questions. Told to
   * the listeners, and logged at warn, once a minute
   * per caller over every replica, so that a flood of refusals cannot flood
   * the audit log; every other refusal is logged at debug.
   */
  private busy(ctx: CallContext, target: ApprovalTarget, channel: 'client' | 'operator', busy: Busy): BusyDecision {
    const detail = {
      caller: `${busy.limit} of this caller's questions are already waiting, its share`,
      rate: `this caller was asked ${busy.limit} questions this minute, as many as one caller may be`,
      server: `${busy.limit} questions are already waiting, as many as the server keeps`,
    }[busy.busy];
    if (busy.first)
      this.tell(ctx, { ...this.subjectOf(ctx, target, channel), kind: 'refused', code: 'busy', why: detail });
    const line = {
      event: RiskEvent.APPROVAL_BUSY,
      server: target.server,
      tool: target.tool,
      level: target.level,
      caller: ctx.auth?.subject,
      channel,
      share: busy.busy,
      limit: busy.limit,
      retryAfterMs: busy.retryAfterMs,
    };
    const message = `"${target.tool}" was not asked about: ${detail}`;
    if (busy.first) this.deps.logger.warn(line, message);
    else this.deps.logger.debug(line, message);
    return {
      approved: false,
      reason: 'unsupported',
      detail,
      busy: busy.busy,
      limit: busy.limit,
      retryAfterMs: busy.retryAfterMs,
    };
  }

  /** An input-required round with no question for the client: only the sealed state naming the operator's. */
  private stillWaiting(binding: StateBinding, question: OperatorQuestion, state?: string): ApprovalDecision {
    const sealed = state ?? this.deps.codec.mint(binding, question.expiresAt, question.id).state;
    const result: InputRequired = {
      resultType: 'input_required',
      requestState: sealed,
      _meta: {
        'dev.sluice/approval': { question: question.id, channel: 'operator', expiresAt: question.expiresAt },
      },
    };
    return { approved: false, reason: 'input-required', result };
  }

  /** What an operator's answer means for this call: an approval runs one call only. */
  private async settle(
    ctx: CallContext,
    target: ApprovalTarget,
    question: OperatorQuestion,
    answer: QuestionAnswer,
    turn?: string,
  ): Promise<ApprovalDecision> {
    switch (answer.decision) {
      case 'lapsed':
        return { approved: false, reason: 'timeout', detail: 'the operator did not answer in time' };
      case 'denied':
        return {
          approved: false,
          reason: 'declined',
          detail: `denied by operator ${answer.by}${answer.reason ? `: ${this.deps.mask(answer.reason)}` : ''}`,
        };
      case 'approved':
        if (turn !== undefined && !(await this.deps.questions.holds(question, turn)))
          return invalid('an identical, later call took this approval over; it runs there, not here');
        if (await this.deps.questions.claim(question)) return { approved: true };
        this.tell(ctx, {
          ...this.subjectOf(ctx, target, 'operator'),
          id: question.id,
          kind: 'refused',
          code: 'invalid',
          why: 'the approval was already used',
        });
        return invalid('the operator approved one run of this call, and it was already used; call again to ask afresh');
    }
  }

  private async lapse(ctx: CallContext, target: ApprovalTarget, question: OperatorQuestion): Promise<ApprovalDecision> {
    const { answer, lapsedNow } = await this.deps.questions.lapse(question);
    if (lapsedNow) this.tell(ctx, { ...this.subjectOf(ctx, target, 'operator'), id: question.id, kind: 'lapsed' });
    return this.settle(ctx, target, question, answer);
  }

  /** A question to the client's person, told to the listeners: never its text, which shows the arguments. */
  private askedClient(ctx: CallContext, target: ApprovalTarget, question: OperatorQuestion, trace: ClientTrace): void {
    trace.id = question.id;
    this.tell(ctx, {
      via: trace.via,
      ...this.subjectOf(ctx, target, 'client'),
      id: question.id,
      kind: 'asked',
      joined: false,
      reason: question.reason,
      message: '',
      expiresAt: question.expiresAt,
    });
  }

  /** Tells the listeners of an event about this call; the audit log's learns the call, for its caller's budget. */
  private tell(ctx: CallContext, event: ApprovalEvent): void {
    this.deps.events.emit(event, { authInfo: ctx.authInfo });
  }

  private subjectOf(ctx: CallContext, target: ApprovalTarget, channel: 'client' | 'operator'): ApprovalEventSubject {
    return {
      channel,
      tool: target.tool,
      server: target.server,
      level: target.level,
      caller: ctx.auth?.subject,
      at: this.deps.now(),
    };
  }

  /**
   * What an operator's answer binds to. The caller is its verified identity,
   * never its session: a client that reconnects (a new session) is the same
   * caller and finds its question again. Unauthenticated callers are all one.
   */
  private operatorBinding(ctx: CallContext, target: ApprovalTarget): StateBinding {
    return { ...stateBindingOf(ctx, target), principal: ownerOf(ctx) };
  }

  /** 2025-11-25: a server-to-client `elicitation/create`, answered within `timeoutMs`. */
  private async byElicitation(
    ctx: CallContext,
    mcp: ServerContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
    trace: ClientTrace,
  ): Promise<ApprovalDecision> {
    trace.via = 'elicitation';
    const waiting = await this.deps.questions.record(
      waitOf(ctx, request, target, this.deps.mask),
      'elicitation',
      this.deps.config.timeoutMs,
      undefined,
      ownerOf(ctx),
    );
    if (isBusy(waiting)) return this.busy(ctx, target, 'client', waiting);
    this.askedClient(ctx, target, waiting, trace);
    try {
      logApprovalRequested(this.deps.logger, target, 'elicitation');
      const answer = await mcp.mcpReq.elicitInput(approvalForm(request.message), {
        timeout: this.deps.config.timeoutMs,
        signal: ctx.signal,
      });
      return decisionOf(answer);
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      switch (codeOf(error)) {
        case 'METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION':
          return await this.overRoundTrip(ctx, mcp, request, target, trace);
        case 'REQUEST_TIMEOUT':
          return {
            approved: false,
            reason: 'timeout',
            detail: `nobody answered within ${this.deps.config.timeoutMs} ms`,
          };
        case 'CAPABILITY_NOT_SUPPORTED':
          return unsupported('the client cannot show a form (it declared no form elicitation)');
        default:
          return unsupported(`the client could not be asked: ${this.deps.mask(messageOf(error))}`);
      }
    } finally {
      await this.deps.questions.close(waiting);
    }
  }

  /** 2026-07-28: the first round returns the question; the retry carries the answer and the sealed state. */
  private async overRoundTrip(
    ctx: CallContext,
    mcp: ServerContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
    trace: ClientTrace,
  ): Promise<ApprovalDecision> {
    trace.via = 'input-required';
    // A nested call asks only when its caller carries its rounds to the client (a code-mode script pauses).
    if (!isCarriedRound(ctx))
      return unsupported(
        'a call made by another tool cannot ask a 2026-07-28 client: only the call the client made can',
      );
    const state = mcp.mcpReq.requestState();
    const answer = mcp.mcpReq.inputResponses?.[APPROVAL_INPUT_KEY];
    const binding = stateBindingOf(ctx, target);
    if (state === undefined) {
      if (answer !== undefined) return invalid('the retry carried an answer without the approval state');
      if (!supportsForm(mcp)) return unsupported('the client cannot show a form (it declared no form elicitation)');
      return await this.ask(ctx, request, target, binding, trace);
    }
    const now = this.deps.now();
    const check = this.deps.codec.check(state, binding, now);
    if (!check.ok) {
      if (check.why === 'expired')
        return {
          approved: false,
          reason: 'timeout',
          detail: `the approval was not completed within ${this.deps.config.timeoutMs} ms`,
        };
      return invalid(
        check.why === 'other-call'
          ? 'the approval state belongs to another call'
          : 'the approval state was altered or is not ours',
      );
    }
    // An operator question's state is the operator's to answer, never the client's form.
    if (check.question !== undefined) return invalid('the approval state names an operator question');
    // One answer per question: a state that was used once, on any replica, is spent.
    const ttlMs = Math.max(1, check.expiresAt - now) + this.deps.config.timeoutMs + SPENT_MARK_SLACK_MS;
    const key = NONCE_PREFIX + check.nonce;
    trace.id = await this.deps.questions.closeByNonce(check.nonce);
    if (!(await this.deps.store.setIfAbsent(key, USED, { ttlMs }))) {
      // The same call again, after an upstream asked its client for input in the round this approval answered:
      // Sluice sealed the upstream's round around this state, and the approval stands for that call: once per
      // round Sluice sealed (each round it seals is new), so that one approval never runs a sent-again round twice.
      if (answer === undefined && isContinuedRound(mcp) && (await this.deps.store.get(key)) === GRANTED) {
        const round = createHash('sha256')
          .update(JSON.stringify(wireStateOf(mcp)), 'utf8')
          .digest('base64url');
        if (await this.deps.store.setIfAbsent(`${key}/round/${round}`, USED, { ttlMs })) return { approved: true };
        return invalid('the approval state was already used: its round was sent before');
      }
      return invalid('the approval state was already used');
    }
    if (answer === undefined) return invalid('the retry carried no answer');
    const decision = decisionOf(answer);
    if (decision.approved) await this.deps.store.set(key, GRANTED, { ttlMs });
    return decision;
  }

  private async ask(
    ctx: CallContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
    binding: StateBinding,
    trace: ClientTrace,
  ): Promise<ApprovalDecision> {
    const expiresAt = this.deps.now() + this.deps.config.timeoutMs;
    const { state, nonce } = this.deps.codec.mint(binding, expiresAt);
    const fields = waitOf(ctx, request, target, this.deps.mask);
    const waiting = await this.deps.questions.record(
      fields,
      'input-required',
      this.deps.config.timeoutMs,
      nonce,
      ownerOf(ctx),
    );
    if (isBusy(waiting)) return this.busy(ctx, target, 'client', waiting);
    this.askedClient(ctx, target, waiting, trace);
    const result: InputRequired = {
      resultType: 'input_required',
      inputRequests: { [APPROVAL_INPUT_KEY]: { method: 'elicitation/create', params: approvalForm(request.message) } },
      requestState: state,
    };
    logApprovalRequested(this.deps.logger, target, 'input-required');
    return { approved: false, reason: 'input-required', result };
  }
}

/** What every replica's view of a client's question shows: what the audit log shows, never the arguments. */
/** How the client's person was asked, and which question: the events of one question share its id. */
interface ClientTrace {
  via: 'elicitation' | 'input-required';
  id?: string;
}

function waitOf(ctx: CallContext, request: ApprovalRequest, target: ApprovalTarget, mask: (text: string) => string) {
  return {
    tool: target.tool,
    server: target.server,
    level: target.level,
    reason: request.reason === undefined ? undefined : mask(request.reason).slice(0, MAX_REASON_CHARS),
    caller: ctx.auth?.subject,
  };
}

function decisionOf(answer: unknown): ApprovalDecision {
  const parsed = AnswerSchema.safeParse(answer);
  if (!parsed.success) return invalid('the answer is not an elicitation result');
  switch (parsed.data.action) {
    case 'accept':
      return parsed.data.content?.[APPROVE_FIELD] === true
        ? { approved: true }
        : { approved: false, reason: 'declined', detail: 'the form was sent without approving' };
    case 'decline':
      return { approved: false, reason: 'declined' };
    case 'cancel':
      return { approved: false, reason: 'cancelled' };
  }
}

function unsupported(detail: string): Refused {
  return { approved: false, reason: 'unsupported', detail };
}

function invalid(detail: string): Refused {
  return { approved: false, reason: 'invalid', detail };
}

/** The reserved `_meta` keys a 2026-07-28 request carries, as the SDK lifts them out. */
function envelopeOf(mcp: ServerContext): Readonly<Record<string, unknown>> | undefined {
  return mcp.mcpReq.envelope;
}

function isModern(mcp: ServerContext): boolean {
  return typeof envelopeOf(mcp)?.[PROTOCOL_VERSION] === 'string';
}

/** As the SDK reads it: `elicitation.form`, or a bare `elicitation: {}` from before modes existed. */
function supportsForm(mcp: ServerContext): boolean {
  const capabilities = envelopeOf(mcp)?.[CLIENT_CAPABILITIES] as { elicitation?: unknown } | undefined;
  const elicitation = capabilities?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  const modes = elicitation as { form?: unknown; url?: unknown };
  return modes.form !== undefined || modes.url === undefined;
}

/** The caller, the tool and what it is called with: a state minted for one call cannot approve another. */
function stateBindingOf(ctx: CallContext, target: ApprovalTarget): StateBinding {
  return {
    principal: principalOf(ctx),
    tool: target.tool,
    server: target.server,
    args: argumentsDigest(ctx.arguments),
    fingerprint: target.fingerprint,
  };
}

/** The auth subject when the caller authenticated; otherwise its session, or nobody in particular. */
function principalOf(ctx: CallContext): string {
  const principal =
    authPrincipalOf(ctx) ?? (ctx.mcp?.sessionId !== undefined ? `session:${ctx.mcp.sessionId}` : 'anonymous');
  return hashPrincipal(principal);
}

/**
 * Whose share of waiting questions a call's question takes: its verified
 * identity (hashed), never its session, which a caller can open afresh;
 * every unauthenticated caller is one, `anonymous`.
 */
function ownerOf(ctx: CallContext): string {
  return hashPrincipal(authPrincipalOf(ctx) ?? 'anonymous');
}

/** The verified caller (`apiKey:<name>`, `oauth:<subject>`: never the OAuth client every user of one app shares). */
function authPrincipalOf(ctx: CallContext): string | undefined {
  return callerKeyOf(ctx.authInfo);
}

function hashPrincipal(principal: string): string {
  return createHash('sha256').update(principal, 'utf8').digest('base64url');
}

function codeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}
