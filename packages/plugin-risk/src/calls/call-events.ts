import { trace } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import type { CallContext, CallToolResult, Executor, Logger, Outcome, SluiceTool } from '@sluice/core';
import { CoreErrorCode } from '@sluice/core';
import { RiskEvent } from '../events.js';
import { publishedRiskOf } from '../exposure/published-risk.js';
import type { SecretMask } from './secret-mask.js';

/** Which calls get `tool.start` / `tool.done` / `tool.crash`. */
export type CallEventScope = 'all' | 'upstream' | 'off';
export type CallEventLevel = 'trace' | 'debug' | 'info';

/** How a call ended, in the events. */
export type CallEndKind = 'ok' | 'refused' | 'input-required' | 'tool-error' | 'upstream-error' | 'error' | 'cancelled';

/** The fields every event of one tool carries: computed once per tool. */
interface ToolFields {
  readonly tool: string;
  /** The upstream's configured name (never what it calls itself); absent for local tools. */
  readonly upstream?: string;
  readonly upstreamTool?: string;
  readonly risk: string;
  readonly riskServer?: string;
  readonly riskTool?: string;
  readonly hitl: boolean;
  readonly floors?: readonly string[];
}

/** What one call keeps between its events: whether `tool.start` was written, and the span it tagged. */
interface CallRecord {
  started: boolean;
  span: Span | undefined;
}

/**
 * The safe-wrapping contract's observable half: each call logs `tool.start`
 * and then exactly one of `tool.done` (a result, including a policy refusal
 * or an input-required round) and `tool.crash` (the call threw, was
 * cancelled, the tool answered with an error, or its upstream failed), with
 * the duration, the upstream's configured name and the composed risk. The
 * same fields go on the active OpenTelemetry span, where one is recording.
 * Error results of imported tools have the operator's secrets masked.
 */
export class CallEvents {
  private readonly fields = new WeakMap<SluiceTool, ToolFields>();
  // One child logger per tool: pino serializes its fields once, not on every call.
  private readonly loggers = new WeakMap<SluiceTool, Logger>();
  // Kept off `ctx.state`, which a call allocates on first use: most calls record nothing here.
  private readonly calls = new WeakMap<CallContext, CallRecord>();

  constructor(
    private readonly logger: Logger,
    private readonly scope: CallEventScope,
    private readonly level: CallEventLevel,
    private readonly mask: SecretMask,
  ) {}

  get enabled(): boolean {
    return this.scope !== 'off';
  }

  applies(tool: SluiceTool): boolean {
    return this.scope === 'all' || (this.scope === 'upstream' && tool.source.kind === 'upstream');
  }

  /** `preCall`, first of all taps. */
  start(ctx: CallContext): undefined {
    if (!this.applies(ctx.tool)) return undefined;
    const logging = this.logger.isLevelEnabled(this.level);
    const span = activeSpan();
    if (!logging && span === undefined) return undefined;
    const record: CallRecord = { started: logging, span: undefined };
    this.calls.set(ctx, record);
    if (logging) this.logStart(ctx);
    if (span !== undefined) this.tag(record, span, ctx.tool);
    return undefined;
  }

  /**
   * The executor wrapper: tags the span that is active while the tool runs
   * (a gateway activates its call span there), and masks secrets out of an
   * imported tool's error result. Returns `next` when neither applies.
   */
  wrap(next: Executor, tool: SluiceTool): Executor {
    const events = this.applies(tool);
    const masks = tool.source.kind === 'upstream' && !this.mask.empty;
    if (!events && !masks) return next;
    return (ctx) => {
      const span = events ? activeSpan() : undefined;
      if (span !== undefined) this.tag(this.recordOf(ctx), span, tool);
      if (!masks) return next(ctx);
      return next(ctx).then((result) => this.mask.result(result));
    };
  }

  /** `settled`: exactly one of done and crash. `tool.crash` is always written (at warn); the rest at `calls.level`. */
  settle(ctx: CallContext, outcome: Outcome): void {
    if (!this.applies(ctx.tool)) return;
    const end = endOf(outcome);
    const logging = this.logger.isLevelEnabled(this.level);
    const record = this.calls.get(ctx);
    // Nothing to write and no span to tag: the common case costs a lookup.
    if (!logging && !end.crash && record === undefined) return;
    if (end.crash || logging) {
      // Refused before preCall (invalid arguments, or a tap ahead of ours): the pair is still whole.
      if (logging && record?.started !== true) this.logStart(ctx);
      const logger = this.loggerOf(ctx.tool);
      const fields = {
        requestId: ctx.requestId,
        durationMs: round(outcome.durationMs),
        outcome: end.kind,
        ...end.extra,
      };
      if (end.crash)
        logger.warn({ event: RiskEvent.TOOL_CRASH, ...fields }, `tool "${ctx.tool.name}" crashed: ${end.kind}`);
      else logger[this.level]({ event: RiskEvent.TOOL_DONE, ...fields }, `tool "${ctx.tool.name}" done: ${end.kind}`);
    }
    const span = record?.span;
    if (span?.isRecording())
      span.setAttributes({ 'sluice.call.outcome': end.kind, 'sluice.call.duration_ms': round(outcome.durationMs) });
  }

  private recordOf(ctx: CallContext): CallRecord {
    let record = this.calls.get(ctx);
    if (record === undefined) {
      record = { started: false, span: undefined };
      this.calls.set(ctx, record);
    }
    return record;
  }

  private logStart(ctx: CallContext): void {
    if (!this.logger.isLevelEnabled(this.level)) return;
    this.loggerOf(ctx.tool)[this.level](
      { event: RiskEvent.TOOL_START, requestId: ctx.requestId },
      `tool "${ctx.tool.name}" started`,
    );
  }

  /** Tags a span with the tool's fields, once per span. */
  private tag(record: CallRecord, span: Span, tool: SluiceTool): void {
    if (span === record.span) return;
    span.setAttributes(attributesOf(this.fieldsOf(tool)));
    record.span = span;
  }

  private loggerOf(tool: SluiceTool): Logger {
    let logger = this.loggers.get(tool);
    if (logger === undefined) {
      logger = this.logger.child(this.fieldsOf(tool));
      this.loggers.set(tool, logger);
    }
    return logger;
  }

  private fieldsOf(tool: SluiceTool): ToolFields {
    let fields = this.fields.get(tool);
    if (fields === undefined) {
      fields = fieldsOf(tool);
      this.fields.set(tool, fields);
    }
    return fields;
  }
}

/** The active span, when one records; otherwise nothing to tag. */
function activeSpan(): Span | undefined {
  const span = trace.getActiveSpan();
  return span !== undefined && span.isRecording() ? span : undefined;
}

function fieldsOf(tool: SluiceTool): ToolFields {
  const risk = publishedRiskOf(tool.definition);
  const upstream =
    tool.source.kind === 'upstream' ? { upstream: tool.source.upstream, upstreamTool: tool.source.originalName } : {};
  return {
    tool: tool.name,
    ...upstream,
    risk: risk?.level ?? 'L0',
    ...(risk?.server === undefined ? {} : { riskServer: risk.server }),
    ...(risk?.tool === undefined ? {} : { riskTool: risk.tool }),
    hitl: risk?.hitl === true,
    ...(risk?.floors && risk.floors.length > 0 ? { floors: risk.floors } : {}),
  };
}

function attributesOf(fields: ToolFields): Attributes {
  const attributes: Attributes = { 'sluice.risk.level': fields.risk, 'sluice.risk.hitl': fields.hitl };
  if (fields.upstream !== undefined) attributes['sluice.upstream'] = fields.upstream;
  if (fields.upstreamTool !== undefined) attributes['sluice.upstream.tool'] = fields.upstreamTool;
  if (fields.riskServer !== undefined) attributes['sluice.risk.server'] = fields.riskServer;
  if (fields.riskTool !== undefined) attributes['sluice.risk.tool'] = fields.riskTool;
  if (fields.floors !== undefined) attributes['sluice.risk.floors'] = [...fields.floors];
  return attributes;
}

interface End {
  readonly kind: CallEndKind;
  readonly crash: boolean;
  readonly extra: Readonly<Record<string, unknown>>;
}

/**
 * Done or crash. A policy refusal is `done`: nothing failed, a guard did its
 * work; so is an upstream answer refused past its read cap. An upstream
 * failure (the core's other `UPSTREAM_*` refusals) and a tool's own error
 * result are crashes of the call.
 */
// The ends without a code, built once: `settle` runs on every call and most end `ok`.
const NO_EXTRA: Readonly<Record<string, unknown>> = Object.freeze({});
const OK: End = Object.freeze({ kind: 'ok', crash: false, extra: NO_EXTRA });
const TOOL_ERROR: End = Object.freeze({ kind: 'tool-error', crash: true, extra: NO_EXTRA });
const INPUT_REQUIRED: End = Object.freeze({ kind: 'input-required', crash: false, extra: NO_EXTRA });
const CANCELLED: End = Object.freeze({ kind: 'cancelled', crash: true, extra: NO_EXTRA });

function endOf(outcome: Outcome): End {
  switch (outcome.status) {
    case 'ok':
      return outcome.result.isError ? TOOL_ERROR : OK;
    case 'refused':
      if (isInputRequired(outcome.result)) return INPUT_REQUIRED;
      // An answer past the read cap is a bound the gateway enforced (egress's maxPayloadBytes), not a failure.
      if (outcome.code.startsWith('UPSTREAM_') && outcome.code !== CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE)
        return { kind: 'upstream-error', crash: true, extra: { code: outcome.code } };
      return { kind: 'refused', crash: false, extra: { code: outcome.code } };
    case 'error':
      return { kind: 'error', crash: true, extra: { code: outcome.error.code, error: outcome.error.message } };
    case 'cancelled':
      return CANCELLED;
  }
}

function isInputRequired(result: CallToolResult): boolean {
  return result.resultType === 'input_required';
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
