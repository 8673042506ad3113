import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { CallToolRequestOptions, Client, Progress } from '@modelcontextprotocol/client';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import type { CallContext, Executor } from '../context.js';
import { messageOf } from '../errors.js';
import { toPlainMeta } from '../meta.js';
import type { CallToolResult, ServerContext, Tool } from '../protocol.js';
import { CoreErrorCode } from '../errors.js';
import type { UpstreamErrorCode } from './errors.js';
import { upstreamFailure } from './errors.js';
import { ResponseBudget, withResponseBudget } from './response-limit.js';
import { injectTraceContext, withTraceSpan } from './tracing.js';

/** What the proxy needs from the upstream it calls. */
export interface UpstreamLink {
  readonly name: string;
  readonly timeoutMs: number;
  /** The connected client, or undefined while the upstream is down. */
  connected(): Client | undefined;
  /** Milliseconds until the next reconnection attempt, while down. */
  retryInMs(): number | undefined;
  /** Health input: a call completed. */
  callSucceeded(): void;
  /** Health input: a call hit its timeout. */
  callTimedOut(): void;
  /** The connection failed under a call: drop it and reconnect. */
  connectionFailed(client: Client, reason: string): void;
  /** Removes secrets from text and bounds its length. */
  redact(text: string): string;
}

/**
 * The base executor of an imported tool: `tools/call` upstream under the
 * tool's original name, with the outgoing `_meta` (call stack, trace context
 * and whatever plugins added), progress forwarded to the caller, the
 * caller's cancellation passed on, and a per-call timeout. Every way the hop
 * can fail ends as an `isError` result that names the upstream.
 */
export function proxyExecutor(link: UpstreamLink, original: Tool): Executor {
  const attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': original.name,
    'sluice.upstream': link.name,
  };
  return (ctx) =>
    withTraceSpan(
      `tools/call ${original.name}`,
      { meta: ctx.meta, kind: SpanKind.CLIENT, attributes },
      async (span, spanContext) => {
        const result = await callUpstream(link, original, ctx, spanContext);
        if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR });
        return result;
      },
    );
}

async function callUpstream(
  link: UpstreamLink,
  original: Tool,
  ctx: CallContext,
  spanContext: Context,
): Promise<CallToolResult> {
  const client = link.connected();
  if (client === undefined) return unavailable(link);
  const limit = ctx.tool.responseLimitBytes;
  const budget = limit === undefined ? undefined : new ResponseBudget(limit);
  const meta = toPlainMeta(ctx.outgoingMeta) ?? {};
  injectTraceContext(meta, spanContext);
  const options: CallToolRequestOptions = {
    signal: budget ? AbortSignal.any([ctx.signal, budget.signal]) : ctx.signal,
    timeout: link.timeoutMs,
    ...progressOptions(ctx),
  };
  const params = {
    name: original.name,
    arguments: ctx.arguments,
    ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
  };
  const send = () => client.callTool(params, options) as Promise<CallToolResult>;
  try {
    const result = budget ? await withResponseBudget(budget, send) : await send();
    if (budget && !budget.admits(result)) return tooLarge(link, original, budget.limit);
    link.callSucceeded();
    return result;
  } catch (error) {
    // The caller cancelled: the SDK told the upstream; the pipeline reports the cancellation.
    if (ctx.signal.aborted) throw error;
    if (budget?.exceeded) return tooLarge(link, original, budget.limit);
    return failed(link, client, original, error, ctx);
  }
}

/** Asks the upstream for progress only when the caller asked Sluice for it, and relays it under the caller's token. */
function progressOptions(ctx: CallContext): Pick<CallToolRequestOptions, 'onprogress'> {
  const token = ctx.meta.progressToken;
  const mcp: ServerContext | undefined = ctx.mcp;
  if (mcp === undefined || !(typeof token === 'string' || (typeof token === 'number' && Number.isFinite(token))))
    return {};
  return {
    onprogress: (progress: Progress) => {
      const params = {
        progressToken: token,
        progress: progress.progress,
        ...(progress.total === undefined ? {} : { total: progress.total }),
        ...(progress.message === undefined ? {} : { message: progress.message }),
      };
      mcp.mcpReq.notify({ method: 'notifications/progress', params }).catch(() => {});
    },
  };
}

function unavailable(link: UpstreamLink): CallToolResult {
  const retryIn = link.retryInMs();
  return upstreamFailure(
    CoreErrorCode.UPSTREAM_UNAVAILABLE,
    link.name,
    `Upstream "${link.name}" is not connected right now; Sluice is reconnecting to it.`,
    'Try again shortly, or use another tool.',
    retryIn,
  );
}

function tooLarge(link: UpstreamLink, original: Tool, limit: number): CallToolResult {
  return upstreamFailure(
    CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE,
    link.name,
    `The answer of upstream "${link.name}" to "${original.name}" exceeded ${limit} bytes and was not read further.`,
    'Ask for less: narrow the query, or request fewer items or a smaller page.',
  );
}

// The SDK's own checks of a tool result against the tool's output schema.
const OUTPUT_CHECK = /output schema|outputSchema|structured content/i;

function failed(link: UpstreamLink, client: Client, original: Tool, error: unknown, ctx: CallContext): CallToolResult {
  const tool = original.name;
  const detail = link.redact(messageOf(error)) || 'no details given';
  const code = classify(error);
  ctx.logger.warn(
    { event: 'upstream.call_failed', upstream: link.name, tool, code, error: detail },
    `call to upstream "${link.name}" failed`,
  );
  switch (code) {
    case CoreErrorCode.UPSTREAM_TIMEOUT:
      link.callTimedOut();
      return upstreamFailure(
        code,
        link.name,
        `Upstream "${link.name}" did not answer "${tool}" within ${link.timeoutMs} ms.`,
        'Try again later, or with a smaller request.',
      );
    case CoreErrorCode.UPSTREAM_ERROR:
      return upstreamFailure(
        code,
        link.name,
        `Upstream "${link.name}" refused "${tool}": ${detail}`,
        "Check the arguments against the tool's input schema and call it again.",
      );
    case CoreErrorCode.UPSTREAM_INVALID_RESPONSE:
      return upstreamFailure(
        code,
        link.name,
        `Upstream "${link.name}" answered "${tool}" with something that is not a valid tool result: ${detail}`,
        'Try again later, or use another tool.',
      );
    default:
      link.connectionFailed(client, detail);
      return upstreamFailure(
        CoreErrorCode.UPSTREAM_DISCONNECTED,
        link.name,
        `The connection to upstream "${link.name}" failed during "${tool}"; Sluice is reconnecting.`,
        'Try again shortly. The call may or may not have taken effect upstream.',
      );
  }
}

function classify(error: unknown): UpstreamErrorCode {
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return CoreErrorCode.UPSTREAM_TIMEOUT;
    if (error.code === SdkErrorCode.InvalidResult || error.code === SdkErrorCode.UnsupportedResultType)
      return CoreErrorCode.UPSTREAM_INVALID_RESPONSE;
    return CoreErrorCode.UPSTREAM_DISCONNECTED;
  }
  if (error instanceof ProtocolError)
    return OUTPUT_CHECK.test(error.message) ? CoreErrorCode.UPSTREAM_INVALID_RESPONSE : CoreErrorCode.UPSTREAM_ERROR;
  if (error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError'))
    return CoreErrorCode.UPSTREAM_INVALID_RESPONSE;
  return CoreErrorCode.UPSTREAM_DISCONNECTED;
}
