import { createHash } from 'node:crypto';
import { isContinuedRound, messageOf } from '@sluice/core';
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
import { logApprovalDecided, logApprovalRequested } from '../events.js';
import type { ApprovalChannel } from '../events.js';
import type { ApprovalTarget } from './targets.js';
import type { RequestStateCodec, StateBinding } from './request-state.js';
import { argumentsDigest } from './request-state.js';
import type { PendingApproval, PendingApprovals } from './pending.js';
import { approvalIdOf, auditAsked, auditDecided, newApprovalId } from '../audit-events.js';
import type { ApprovalTrace, AuditSink } from '../audit-events.js';

/** The input-required answer of a 2026-07-28 approval round. */
export type InputRequired = Extract<ApprovalDecision, { reason: 'input-required' }>['result'];
type Refused = Extract<ApprovalDecision, { approved: false; detail?: string }>;

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
  /** Where waits for a person are listed while they last. */
  readonly pending: PendingApprovals;
  /** Where each question and its outcome are appended: the server's audit log. */
  readonly audit: AuditSink;
}

const PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const NONCE_PREFIX = 'dev.sluice/risk/approval-nonce/';
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

  /** The questions nobody has answered yet; a 2026-07-28 one answered on another replica leaves. */
  pending(): Promise<PendingApproval[]> {
    return this.deps.pending.list(async (nonce) => (await this.deps.store.get(NONCE_PREFIX + nonce)) !== undefined);
  }

  async approve(ctx: CallContext, request: ApprovalRequest): Promise<ApprovalDecision> {
    const target = this.deps.targetOf(ctx);
    const trace: ApprovalTrace & { repeat?: boolean } = {};
    const decision = await this.decide(ctx, request, target, trace);
    if (decision.approved || decision.reason !== 'input-required') {
      logApprovalDecided(this.deps.logger, target, decision);
      if (trace.repeat !== true) await auditDecided(this.deps.audit, target, trace, ctx.auth?.subject, decision);
    }
    return decision;
  }

  private async decide(
    ctx: CallContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
    trace: ApprovalTrace & { repeat?: boolean },
  ): Promise<ApprovalDecision> {
    const mcp = ctx.mcp;
    if (mcp === undefined) return unsupported('the call did not come from an MCP client, so nobody can be asked');
    if (isModern(mcp)) return this.overRoundTrip(ctx, mcp, request, target, trace);
    return this.byElicitation(ctx, mcp, request, target, trace);
  }

  /** 2025-11-25: a server-to-client `elicitation/create`, answered within `timeoutMs`. */
  private async byElicitation(
    ctx: CallContext,
    mcp: ServerContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
    trace: ApprovalTrace & { repeat?: boolean },
  ): Promise<ApprovalDecision> {
    trace.via = 'elicitation';
    trace.id = newApprovalId();
    const since = this.deps.now();
    const settled = this.deps.pending.add({
      ...waitOf(ctx, request, target, 'elicitation'),
      since,
      expiresAt: since + this.deps.config.timeoutMs,
    });
    try {
      logApprovalRequested(this.deps.logger, target, 'elicitation');
      await auditAsked(this.deps.audit, target, trace, ctx.auth?.subject, request.reason);
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
      settled();
    }
  }

  /** 2026-07-28: the first round returns the question; the retry carries the answer and the sealed state. */
  private async overRoundTrip(
    ctx: CallContext,
    mcp: ServerContext,
    request: ApprovalRequest,
    target: ApprovalTarget,
    trace: ApprovalTrace & { repeat?: boolean },
  ): Promise<ApprovalDecision> {
    trace.via = 'input-required';
    trace.id = undefined;
    if (ctx.parent !== undefined)
      return unsupported(
        'a call made by another tool cannot ask a 2026-07-28 client: only the call the client made can',
      );
    const state = mcp.mcpReq.requestState();
    const answer = mcp.mcpReq.inputResponses?.[APPROVAL_INPUT_KEY];
    const binding = stateBindingOf(ctx, target);
    if (state === undefined) {
      if (answer !== undefined) return invalid('the retry carried an answer without the approval state');
      if (!supportsForm(mcp)) return unsupported('the client cannot show a form (it declared no form elicitation)');
      return this.ask(ctx, request, target, binding, trace);
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
    // One answer per question: a state that was used once, on any replica, is spent.
    const ttlMs = Math.max(1, check.expiresAt - now) + this.deps.config.timeoutMs;
    const key = NONCE_PREFIX + check.nonce;
    trace.id = approvalIdOf(check.nonce);
    this.deps.pending.settle(check.nonce);
    if (!(await this.deps.store.setIfAbsent(key, USED, { ttlMs }))) {
      // The same call again, after an upstream asked its client for input in the round this approval answered:
      // Sluice sealed the upstream's round around this state, and the approval stands for that call.
      if (answer === undefined && isContinuedRound(mcp) && (await this.deps.store.get(key)) === GRANTED) {
        trace.repeat = true; // the approval recorded in the round it answered
        return { approved: true };
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
    trace: ApprovalTrace,
  ): Promise<ApprovalDecision> {
    const since = this.deps.now();
    const expiresAt = since + this.deps.config.timeoutMs;
    const { state, nonce } = this.deps.codec.mint(binding, expiresAt);
    this.deps.pending.add({ ...waitOf(ctx, request, target, 'input-required'), since, expiresAt, nonce });
    const result: InputRequired = {
      resultType: 'input_required',
      inputRequests: { [APPROVAL_INPUT_KEY]: { method: 'elicitation/create', params: approvalForm(request.message) } },
      requestState: state,
    };
    logApprovalRequested(this.deps.logger, target, 'input-required');
    trace.id = approvalIdOf(nonce);
    await auditAsked(this.deps.audit, target, trace, ctx.auth?.subject, request.reason);
    return { approved: false, reason: 'input-required', result };
  }
}

/** What the operator's view of a wait shows: what the audit log shows, never the arguments. */
function waitOf(ctx: CallContext, request: ApprovalRequest, target: ApprovalTarget, via: ApprovalChannel) {
  return {
    tool: target.tool,
    server: target.server,
    level: target.level,
    reason: request.reason,
    via,
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
  const auth = ctx.authInfo;
  let principal = 'anonymous';
  if (auth !== undefined) {
    const subject = (auth.extra as { sub?: unknown } | undefined)?.sub;
    principal = `auth:${auth.clientId}${typeof subject === 'string' ? `:${subject}` : ''}`;
  } else if (ctx.mcp?.sessionId !== undefined) {
    principal = `session:${ctx.mcp.sessionId}`;
  }
  return createHash('sha256').update(principal, 'utf8').digest('base64url');
}

function codeOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}
