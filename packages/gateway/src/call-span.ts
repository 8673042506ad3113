import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { Attributes, Context, Span } from '@opentelemetry/api';
import { readRefusal } from '@sluice/core';
import { extractTraceContext, tracingRegistered } from '@sluice/upstream';
import type { CallContext, Outcome } from '@sluice/core';
import { outcomeLabel } from './call-metrics.js';
import { VERSION } from './version.js';

/** The tracer name of the gateway's call spans. */
export const GATEWAY_TRACER_NAME = '@sluice/gateway';

/** A call's span, and a context holding it for what runs inside the call. */
export interface CallSpan {
  readonly span: Span;
  readonly context: Context;
}

/**
 * Opens the span of one Sluice call. Its parent is the span of the call whose
 * `ctx.call()` started this one (a chained step), else the caller's
 * `_meta.traceparent`, else whatever span is active. Returns undefined when
 * nothing records (no OpenTelemetry SDK registered), so that calls then pay
 * for no context switching.
 */
export function startCallSpan(ctx: CallContext, parent: CallSpan | undefined): CallSpan | undefined {
  // No SDK: no span would record, so none is made (nor its parent context extracted, nor its attributes).
  if (!tracingRegistered()) return undefined;
  const parentContext = parent?.context ?? extractTraceContext(ctx.meta, context.active());
  const tool = ctx.tool;
  const attributes: Attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool.name,
    'sluice.transport': ctx.transport,
  };
  if (ctx.requestId !== undefined) attributes['jsonrpc.request.id'] = String(ctx.requestId);
  if (tool.source.kind === 'upstream') attributes['sluice.upstream'] = tool.source.upstream;
  const caller = ctx.auth;
  if (caller) {
    attributes['enduser.id'] = caller.subject;
    attributes['sluice.auth.method'] = caller.method;
    attributes['sluice.auth.client_id'] = caller.clientId;
  }
  const kind = parent ? SpanKind.INTERNAL : SpanKind.SERVER;
  const span = trace
    .getTracer(GATEWAY_TRACER_NAME, VERSION)
    .startSpan(`tools/call ${tool.name}`, { kind, attributes }, parentContext);
  if (!span.isRecording()) return undefined;
  return { span, context: trace.setSpan(parentContext, span) };
}

/** Closes a call's span with what the call came to. */
export function endCallSpan({ span }: CallSpan, outcome: Outcome): void {
  span.setAttribute('sluice.outcome', outcomeLabel(outcome));
  const errorType = errorTypeOf(outcome);
  if (errorType !== undefined) {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

function errorTypeOf(outcome: Outcome): string | undefined {
  switch (outcome.status) {
    case 'refused':
      return outcome.code;
    case 'error':
      return outcome.error.code;
    case 'cancelled':
      return 'cancelled';
    case 'ok':
      return outcome.result.isError ? (readRefusal(outcome.result)?.code ?? 'tool_error') : undefined;
  }
}
