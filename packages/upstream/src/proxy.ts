import {
  ProtocolError,
  SSEClientTransport,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  ProtocolErrorCode,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type { CallToolRequestOptions, Client, Progress } from '@modelcontextprotocol/client';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Context } from '@opentelemetry/api';
import type { CallContext, Executor } from '@sluice/core';
import { callerKeyOf, messageOf } from '@sluice/core';
import { toPlainMeta } from '@sluice/core/internal';
import type { CallToolResult, ServerContext, Tool } from '@sluice/core';
import { CoreErrorCode, SluiceError } from '@sluice/core';
import type { UpstreamErrorCode } from './errors.js';
import { upstreamFailure } from './errors.js';
import { refusal } from '@sluice/core';
import {
  connectDeclined,
  connectElicitation,
  connectRound,
  isUpstreamAuthError,
  isUpstreamConnectRequired,
} from './oauth/errors.js';
import type { UpstreamConnectRequired } from './oauth/errors.js';
import type { CallerIdentity } from '@sluice/core';
import { NodeHttpClientTransport } from './node-http-transport.js';
import { StdioChildTransport } from './stdio-child-transport.js';
import { ResponseBudget, withResponseBudget } from './response-limit.js';
import { injectTraceContext, traceIdle, withTraceSpan } from './tracing.js';
import { isModernCaller, relayedError, roundParams, sealed, withoutConnectAnswer } from './modern-call.js';
import type { RoundStateSeal } from './round-state.js';

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
  /**
   * This caller's own connection, when the upstream is reached with each caller's grant (`token_exchange`,
   * `per_user`); `modern` asks for one speaking 2026-07-28, which the upstream may not.
   */
  callerClient?(caller: CallerIdentity | undefined, modern?: boolean): Promise<Client> | undefined;
  /**
   * A call of `caller` (`callerKeyOf`, or `anonymous`) began on `client`, for relaying the upstream's requests and
   * log messages to it; returns what ends it. A caller's own connection relays to that caller's calls only.
   */
  enterCall?(mcp: ServerContext | undefined, caller: string, client?: Client): () => void;
  /** The connection for 2026-07-28 callers, or undefined (the upstream speaks only 2025-11-25). */
  modernLane?(): Promise<Client | undefined>;
  /** Seals an upstream's `requestState` between rounds. */
  readonly roundSeal?: RoundStateSeal;
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
    traceIdle(ctx.meta)
      ? callUpstream(link, original, ctx, undefined)
      : withTraceSpan(
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
  spanContext: Context | undefined,
): Promise<CallToolResult> {
  // A 2026-07-28 caller's call crosses a 2026-07-28 connection, so that input-required round trips cross with it.
  const modern = link.roundSeal !== undefined && isModernCaller(ctx.mcp);
  const own = link.callerClient?.(ctx.auth, modern);
  if (own !== undefined) {
    let client: Client;
    try {
      client = await own;
    } catch (error) {
      return callerConnectionFailed(link, original, error, ctx);
    }
    const seal = link.roundSeal;
    const round =
      seal !== undefined && modern && client.getProtocolEra() === 'modern'
        ? withoutConnectAnswer(roundParams(ctx.mcp, link.name, original.name, seal))
        : undefined;
    return callOn(link, original, ctx, spanContext, client, round);
  }
  const lane = modern ? await link.modernLane?.() : undefined;
  const round =
    lane !== undefined && link.roundSeal ? roundParams(ctx.mcp, link.name, original.name, link.roundSeal) : undefined;
  const client = lane ?? link.connected();
  if (client === undefined) return unavailable(link);
  return callOn(link, original, ctx, spanContext, client, round);
}

/** A tool call on one connection to the upstream, with its budget, progress relay and failure mapping. */
async function callOn(
  link: UpstreamLink,
  original: Tool,
  ctx: CallContext,
  spanContext: Context | undefined,
  client: Client,
  round: ReturnType<typeof roundParams> | undefined,
): Promise<CallToolResult> {
  const limit = ctx.tool.responseLimitBytes;
  let meta = toPlainMeta(ctx.outgoingMeta, round?.meta);
  if (spanContext !== undefined) injectTraceContext((meta ??= {}), spanContext);
  const relay = progressRelay(ctx);
  const params = {
    name: original.name,
    arguments: ctx.arguments,
    ...(meta !== undefined && Object.keys(meta).length > 0 ? { _meta: meta } : {}),
    ...(round?.inputResponses ? { inputResponses: round.inputResponses } : {}),
    ...(round?.requestState === undefined ? {} : { requestState: round.requestState }),
  };
  // Always a budget: over HTTP it also carries the connection's per-message cap to the call.
  const budget = new ResponseBudget(limit ?? Number.POSITIVE_INFINITY);
  const transport = client.transport;
  const leave = link.enterCall?.(ctx.mcp, callerKeyOf(ctx.authInfo) ?? 'anonymous', client);
  // The node:http transport counts the answer's bytes itself and ends the call when they run out; a stdio child's
  // ends the call as its answer is read, so that what the child writes after it is not the call's.
  const carried =
    transport instanceof NodeHttpClientTransport
      ? transport.carry(budget, ctx.mcp)
      : transport instanceof StdioChildTransport && leave !== undefined
        ? transport.carry(leave)
        : undefined;
  // The SDK's fetch-based transports find the budget through the async context, and stop by its signal.
  const fetched = transport instanceof StreamableHTTPClientTransport || transport instanceof SSEClientTransport;
  const options: CallToolRequestOptions = {
    signal: fetched ? AbortSignal.any([ctx.signal, budget.signal]) : ctx.signal,
    timeout: link.timeoutMs,
    ...(carried ? { headers: carried } : {}),
    ...(relay ? { onprogress: relay.onprogress } : {}),
    ...(round ? { allowInputRequired: true } : {}),
    // The result is checked against the output schema the tool was listed with. Sluice pages tools/list itself, so
    // the SDK keeps no list of its own to check against. Only on the connection that listed it: a 2026-07-28 lane
    // may answer with an input-required round, which has no structured content.
    ...(client === link.connected() ? { toolDefinition: original } : {}),
  };
  const send = () => client.callTool(params, options) as Promise<CallToolResult>;
  try {
    const result = await (fetched ? withResponseBudget(budget, send) : send());
    if (limit !== undefined && !budget.admits(result)) return tooLarge(link, original, budget.exceededLimit);
    link.callSucceeded();
    return round && link.roundSeal ? sealed(result, link.name, original.name, link.roundSeal, ctx.mcp) : result;
  } catch (error) {
    // The caller cancelled: the SDK told the upstream; the pipeline reports the cancellation.
    if (ctx.signal.aborted) throw error;
    if (budget.exceeded) return tooLarge(link, original, budget.exceededLimit);
    const relayed = round ? relayedError(error, (text) => link.redact(text)) : undefined;
    if (relayed !== undefined) throw relayed;
    return failed(link, client, original, error, ctx);
  } finally {
    leave?.();
    relay?.stop();
    if (carried) (transport as NodeHttpClientTransport | StdioChildTransport).release(carried);
  }
}

/** Progress notifications relayed at once before coalescing starts, per call. */
const PROGRESS_BURST = 100;
/** Progress notifications relayed per second per call once the burst is spent; the latest note wins. */
const PROGRESS_PER_SECOND = 50;
/** Progress messages from an upstream are cut to this many characters. */
const MAX_PROGRESS_MESSAGE = 1_000;

/**
 * Relays an upstream's progress to the caller. An upstream may send notes
 * far faster than a client reads them, and each relayed note waits in the
 * client's response buffer until read: so notes pass at once up to a burst,
 * then at a steady rate, and notes arriving in between are coalesced into
 * the latest one. When the call ends, a note still waiting is sent before
 * the result.
 */
class ProgressRelay {
  private pending: Progress | undefined;
  private timer: NodeJS.Timeout | undefined;
  private tokens = PROGRESS_BURST;
  private refilled = performance.now();
  private stopped = false;

  constructor(
    private readonly mcp: ServerContext,
    private readonly token: string | number,
  ) {}

  readonly onprogress = (progress: Progress): void => {
    if (this.stopped) return;
    this.refill();
    if (this.timer === undefined && this.tokens >= 1) {
      this.tokens--;
      this.send(progress);
      return;
    }
    this.pending = progress;
    this.timer ??= setTimeout(() => this.flush(), 1_000 / PROGRESS_PER_SECOND);
  };

  /** The call ended: a note still waiting goes out now, later ones are dropped. */
  stop(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const last = this.pending;
    this.pending = undefined;
    if (last !== undefined) this.send(last);
    this.stopped = true;
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(PROGRESS_BURST, this.tokens + ((now - this.refilled) * PROGRESS_PER_SECOND) / 1_000);
    this.refilled = now;
  }

  private flush(): void {
    this.timer = undefined;
    const progress = this.pending;
    this.pending = undefined;
    if (progress === undefined || this.stopped) return;
    this.refill();
    this.tokens = Math.max(0, this.tokens - 1);
    this.send(progress);
  }

  private send(progress: Progress): void {
    const message = typeof progress.message === 'string' ? progress.message.slice(0, MAX_PROGRESS_MESSAGE) : undefined;
    const params = {
      progressToken: this.token,
      progress: progress.progress,
      ...(progress.total === undefined ? {} : { total: progress.total }),
      ...(message === undefined ? {} : { message }),
    };
    this.mcp.mcpReq.notify({ method: 'notifications/progress', params }).catch(() => {});
  }
}

/** Asks the upstream for progress only when the caller asked Sluice for it, and relays it under the caller's token. */
function progressRelay(ctx: CallContext): ProgressRelay | undefined {
  const token = ctx.meta.progressToken;
  const mcp: ServerContext | undefined = ctx.mcp;
  if (mcp === undefined || !(typeof token === 'string' || (typeof token === 'number' && Number.isFinite(token))))
    return undefined;
  return new ProgressRelay(mcp, token);
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
  if (raisedBeforeSending(error)) {
    // Nothing reached the upstream: its connection is as healthy as before, so it stays.
    ctx.logger.warn(
      { event: 'upstream.call_not_sent', upstream: link.name, tool, error: detail },
      `call to upstream "${link.name}" could not be sent`,
    );
    return refusal({
      code: CoreErrorCode.INVALID_ARGUMENTS,
      message: `Sluice could not send "${tool}" to upstream "${link.name}": ${detail}`,
      suggestion: 'Send plainer arguments: less deeply nested, without values JSON cannot hold.',
      details: { upstream: link.name },
    });
  }
  if (isUpstreamAuthError(error) || (error instanceof SdkHttpError && error.status === 401))
    return unauthorized(link, tool, error, detail, ctx);
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

/** A caller's own connection could not be opened: their grant was refused, or the upstream is unreachable. */
function callerConnectionFailed(link: UpstreamLink, original: Tool, error: unknown, ctx: CallContext): CallToolResult {
  if (isUpstreamConnectRequired(error)) {
    if (!isModernCaller(ctx.mcp)) throw connectRequired(link, original.name, error, ctx);
    // 2026-07-28 has no -32042 error: the consent link is the question of an input-required round.
    if (connectDeclined(ctx.mcp?.mcpReq.inputResponses)) return connectRefused(link, original.name);
    logConnectRequired(link, original.name, ctx);
    // An executor's type names tool results; an input-required answer crosses the pipeline as it is.
    return connectRound(link.name, error) as unknown as CallToolResult;
  }
  const detail = link.redact(messageOf(error)) || 'no details given';
  if (isUpstreamAuthError(error) || (error instanceof SdkHttpError && error.status === 401))
    return unauthorized(link, original.name, error, detail, ctx);
  ctx.logger.warn(
    { event: 'upstream.call_failed', upstream: link.name, tool: original.name, error: detail },
    `call to upstream "${link.name}" failed`,
  );
  return upstreamFailure(
    CoreErrorCode.UPSTREAM_UNAVAILABLE,
    link.name,
    `Sluice could not open this caller's connection to upstream "${link.name}": ${detail}`,
    'Try again shortly.',
  );
}

/**
 * A `per_user` caller without a grant: the URL-mode elicitation (-32042)
 * pointing at the consent page. The link is this caller's alone: it travels
 * in the error's data to them, never into a log line or the message.
 */
function connectRequired(
  link: UpstreamLink,
  tool: string,
  error: UpstreamConnectRequired,
  ctx: CallContext,
): SluiceError {
  logConnectRequired(link, tool, ctx);
  const { message, data } = connectElicitation(link.name, error, `call "${tool}" again`);
  return new SluiceError(CoreErrorCode.UPSTREAM_CONNECT_REQUIRED, message, {
    hook: 'call',
    cause: new ProtocolError(ProtocolErrorCode.UrlElicitationRequired, message, data),
  });
}

function logConnectRequired(link: UpstreamLink, tool: string, ctx: CallContext): void {
  ctx.logger.info(
    { event: 'upstream.connect_required', upstream: link.name, tool, code: CoreErrorCode.UPSTREAM_CONNECT_REQUIRED },
    `the caller has no grant at upstream "${link.name}" yet; asked to connect`,
  );
}

/** A 2026-07-28 caller declined to connect: the call ends, and the model is told how to go on. */
function connectRefused(link: UpstreamLink, tool: string): CallToolResult {
  return upstreamFailure(
    CoreErrorCode.UPSTREAM_CONNECT_REQUIRED,
    link.name,
    `Upstream "${link.name}" acts with each caller's own account there, and the caller declined to connect one, so "${tool}" was not called.`,
    'Call it again to be asked once more, or use another tool.',
  );
}

/** Sluice could not authenticate: the connection is as healthy as before, and the message says what to do. */
function unauthorized(
  link: UpstreamLink,
  tool: string,
  error: unknown,
  detail: string,
  ctx: CallContext,
): CallToolResult {
  const code = CoreErrorCode.UPSTREAM_UNAUTHORIZED;
  ctx.logger.warn(
    { event: 'upstream.call_unauthorized', upstream: link.name, tool, code, error: detail },
    `call to upstream "${link.name}" could not be authenticated`,
  );
  if (isUpstreamAuthError(error)) return upstreamFailure(code, link.name, `${error.detail}.`, error.suggestion);
  return upstreamFailure(
    code,
    link.name,
    `Upstream "${link.name}" refused Sluice's credentials for "${tool}", even after a fresh token.`,
    "Ask the operator to check this upstream's `auth` settings; retrying will not help until then.",
  );
}

/**
 * Errors the request raises while being encoded, before any byte is
 * written: a stack overflow on a deep value, a circular structure, a BigInt.
 * They say nothing about the connection.
 */
function raisedBeforeSending(error: unknown): boolean {
  if (error instanceof SdkError || error instanceof ProtocolError) return false;
  if (error instanceof RangeError) return true;
  return error instanceof TypeError && /circular|BigInt|serializ/i.test(error.message);
}

function classify(error: unknown): UpstreamErrorCode {
  // An HTTP error status answers this one request; only 404 (the session is gone) says the connection is lost.
  if (error instanceof SdkHttpError && error.status !== 404) return CoreErrorCode.UPSTREAM_ERROR;
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
