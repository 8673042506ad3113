import { refusal } from '@sluice/core';
import type { ApprovalDecision, Approver, CallContext, CallToolResult, PluginMode } from '@sluice/core';
import type { ApprovalConfig } from './options.js';
import { approvalMessage } from './form.js';
import type { ApprovalTarget, ApprovalTargets } from './targets.js';
import type { BusyDecision, InputRequired } from './approver.js';
import { isBusyDecision } from './approver.js';
import { RiskErrorCode } from '../errors.js';
import { LOCAL_SOURCE } from '../exposure/registry.js';

/**
 * The `preCall` check at `Stage.APPROVAL`: a call to a tool that asks first
 * runs only once a person approved it. Anything else (declined, cancelled,
 * no answer in time, a tampered or replayed 2026-07-28 state, a client that
 * cannot ask) ends in an `isError` refusal that tells the model what
 * happened, never in a protocol error. In audit mode nobody is asked: the
 * core logs the refusal this would have made.
 */
export class ApprovalGate {
  constructor(
    private readonly targets: ApprovalTargets,
    private readonly approver: Approver,
    private readonly config: ApprovalConfig,
    private readonly mode: PluginMode,
    private readonly mask: (text: string) => string,
  ) {}

  /** Answers at once for a tool that does not ask (nearly every call); only asking a person is waited for. */
  check(ctx: CallContext): CallToolResult | undefined | Promise<CallToolResult | InputRequired | undefined> {
    const target = this.targets.of(ctx.tool);
    if (target === undefined) return undefined;
    if (this.mode !== 'enforce') return wouldAsk(ctx.tool.name);
    const message = this.message(ctx, target);
    if (message === undefined) return cannotShow(ctx.tool.name, this.config.maxArgumentChars);
    return this.ask(ctx, target, message);
  }

  private async ask(
    ctx: CallContext,
    target: ApprovalTarget,
    message: string,
  ): Promise<CallToolResult | InputRequired | undefined> {
    const decision = await this.approver.approve(ctx, { message, reason: `risk ${target.level}` });
    if (decision.approved) return undefined;
    if (decision.reason === 'input-required') return decision.result;
    if (isBusyDecision(decision)) return busy(decision, ctx.tool.name);
    return refusalOf(decision, ctx.tool.name);
  }

  private message(ctx: CallContext, target: ApprovalTarget): string | undefined {
    const upstream = target.server === LOCAL_SOURCE ? undefined : target.server;
    return approvalMessage(
      { tool: ctx.tool.name, ...(upstream ? { upstream } : {}), level: target.level, args: ctx.arguments },
      this.config.maxArgumentChars,
      this.mask,
    );
  }
}

type Denied = Exclude<ApprovalDecision, { approved: true } | { reason: 'input-required' }>;

const DO_NOT_RETRY =
  'Do not call it again with the same arguments; tell the user it was not approved, or ask them what to do instead.';

/** What the model reads when a call was not approved. */
export function refusalOf(decision: Denied, tool: string): CallToolResult {
  const detail = decision.detail === undefined ? '' : ` (${decision.detail})`;
  switch (decision.reason) {
    case 'declined':
      return refusal({
        code: RiskErrorCode.APPROVAL_DECLINED,
        message: `A person declined to approve this call of "${tool}"${detail}.`,
        suggestion: DO_NOT_RETRY,
        details: { tool },
      });
    case 'cancelled':
      return refusal({
        code: RiskErrorCode.APPROVAL_CANCELLED,
        message: `The person asked to approve this call of "${tool}" dismissed the request without approving it.`,
        suggestion: DO_NOT_RETRY,
        details: { tool },
      });
    case 'timeout':
      return refusal({
        code: RiskErrorCode.APPROVAL_TIMEOUT,
        message: `Nobody approved this call of "${tool}" in time${detail}.`,
        suggestion: 'Ask the user whether they want it, then call it again.',
        details: { tool },
      });
    case 'invalid':
      return refusal({
        code: RiskErrorCode.APPROVAL_INVALID,
        message: `This call of "${tool}" was refused: its approval could not be verified${detail}.`,
        suggestion: 'Call the tool again without approval state, so that a person is asked afresh.',
        details: { tool },
      });
    case 'unsupported':
      return refusal({
        code: RiskErrorCode.APPROVAL_UNAVAILABLE,
        message: `"${tool}" runs only with a person's approval, and nobody could be asked${detail}.`,
        suggestion: 'Use a client that supports form elicitation, or another tool.',
        details: { tool },
      });
  }
}

/**
 * Nobody was asked: too many questions wait already, this caller's or
 * everybody's, or this caller was asked its minute's questions.
 * `retryAfterMs` is when a place is sure to free: the earliest lapse of the
 * questions that fill the caller's share (its own) or the list, or the end
 * of the minute.
 */
function busy(decision: BusyDecision, tool: string): CallToolResult {
  const after = `in ${Math.ceil(decision.retryAfterMs / 1_000)} s`;
  const wait = {
    caller: `Wait until one of your waiting approvals is answered or lapses (the first lapses ${after})`,
    rate: `Wait until this minute is over (${after})`,
    server: `Wait until waiting approvals are answered or lapse (the first lapses ${after})`,
  }[decision.busy];
  return refusal({
    code: RiskErrorCode.APPROVAL_BUSY,
    message: `"${tool}" runs only with a person's approval, and nobody was asked: ${decision.detail}.`,
    suggestion: `${wait}, then call again; do not call it again now.`,
    retryAfterMs: decision.retryAfterMs,
    details: { tool, share: decision.busy, limit: decision.limit },
  });
}

/** The arguments cannot all be shown to a person: asking would have them approve what they cannot see. */
function cannotShow(tool: string, max: number): CallToolResult {
  return refusal({
    code: RiskErrorCode.APPROVAL_UNAVAILABLE,
    message: `"${tool}" runs only with a person's approval, and its arguments have too many fields to show in full within ${max} characters, so nobody was asked.`,
    suggestion: 'Call it with fewer fields, or split the work into smaller calls.',
    details: { tool },
  });
}

function wouldAsk(tool: string): CallToolResult {
  return refusal({
    code: RiskErrorCode.APPROVAL_REQUIRED,
    message: `A person would have been asked to approve this call of "${tool}".`,
    details: { tool },
  });
}
