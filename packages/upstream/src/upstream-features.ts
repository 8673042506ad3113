import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { Client, ClientCapabilities, ClientContext } from '@modelcontextprotocol/client';
import { LOG_LEVEL_META_KEY } from '@modelcontextprotocol/server';
import type { ServerContext } from '@modelcontextprotocol/server';
import type { FeatureCatalog, FeatureList, FeatureSnapshot } from './features/catalog.js';
import type { LogLevel, LogMessage } from '@sluice/core/internal';
import { levelRank } from '@sluice/core/internal';
import { sessionLevelOf } from '@sluice/core/internal';
import { messageOf } from '@sluice/core';
import type { Logger } from '@sluice/core';
import type { ImportSource } from '@sluice/core';
import { NodeHttpClientTransport } from './node-http-transport.js';
import { jsonBytes } from './bounded-list.js';
import type { ListReader } from './bounded-list.js';

/**
 * What Sluice tells an upstream it can do as a client: whatever a client of
 * Sluice may do, relayed to the client that made the call the upstream is
 * serving. A client without the capability makes the upstream's request
 * fail with a protocol error.
 */
export const UPSTREAM_CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};

/**
 * An upstream's requests relayed to one call's client at once (sampling,
 * elicitation, roots). Each is held until the client answers: its params in
 * memory until the client reads them, and a question its person or model
 * must answer. More are refused to the upstream on the spot.
 */
export const MAX_CLIENT_REQUESTS_PER_CALL = 16;

/** The bytes of those requests' params held for one call's client at once; one request larger than this is refused. */
export const MAX_CLIENT_REQUEST_BYTES_PER_CALL = 4 * 1024 * 1024;

/**
 * The largest log message relayed (its params' JSON, in UTF-8 bytes); a
 * larger one is dropped. A client that does not read its stream keeps every
 * message it is sent in the gateway's memory.
 */
export const MAX_LOG_MESSAGE_BYTES = 64 * 1024;

/** Log bytes relayed to the client of one call; the rest of that call's messages are dropped. */
export const MAX_LOG_BYTES_PER_CALL = 1024 * 1024;

/** At most this many tools, resources, templates or prompts are kept per upstream; more are reported and left out. */
export const MAX_FEATURE_ITEMS = 10_000;

/**
 * How long after a caller's call ends a call of another caller is not
 * trusted with the upstream's unmarked messages: a log line or a question an
 * upstream sends late for the call that ended must not reach the next one.
 */
export const SHARED_GRACE_MS = 2_000;

/** A call in flight, whose caller it is, and whether another caller's call came near it. */
interface InFlight {
  readonly caller: string;
  shared: boolean;
}

/**
 * The calls in flight on one upstream. A request or log message an upstream
 * sends carries no mark of the call it serves. Over Streamable HTTP the
 * stream it arrives on tells (see `relatedCallerOf`); otherwise Sluice
 * relays it to the caller only when exactly one call is in flight on that
 * upstream and no other caller's call came near it: none overlapped it, and
 * none ended within `SHARED_GRACE_MS` before it began (the upstream may
 * still be sending for that one). With several, or with another caller
 * near, it cannot tell, and never guesses: one caller's call never receives
 * what another caller's call left behind.
 */
export class CallRelay {
  private readonly active = new Map<ServerContext, InFlight>();
  /** When each caller's latest call ended, oldest first, within the grace (older entries are dropped as calls begin). */
  private readonly ended = new Map<string, number>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A call of `caller` (core's `callerKeyOf`, or a fixed name for every unauthenticated caller) began; returns the function that ends it. */
  enter(mcp: ServerContext | undefined, caller: string): () => void {
    if (mcp === undefined) return noop;
    const now = this.now();
    const call: InFlight = { caller, shared: false };
    for (const other of this.active.values())
      if (other.caller !== caller) {
        other.shared = true;
        call.shared = true;
      }
    // Ends are kept in the order they happened (each caller's latest moved last): drop the lapsed from the front,
    // and what stays is within the grace, so any entry but the caller's own is another caller's call nearby.
    for (const [who, at] of this.ended) {
      if (now - at < SHARED_GRACE_MS) break;
      this.ended.delete(who);
    }
    if (this.ended.size > (this.ended.has(caller) ? 1 : 0)) call.shared = true;
    this.active.set(mcp, call);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.active.delete(mcp);
      this.ended.delete(caller);
      this.ended.set(caller, this.now());
    };
  }

  /** The one call in flight, or undefined (none, more than one, or another caller's call came near it). */
  caller(): ServerContext | undefined {
    if (this.active.size !== 1) return undefined;
    const [mcp, call] = this.active.entries().next().value as [ServerContext, InFlight];
    return call.shared ? undefined : mcp;
  }

  get inFlight(): number {
    return this.active.size;
  }
}

/** Log messages relayed at once per upstream before the rate applies. */
const LOG_BURST = 100;
/** Log messages relayed per second per upstream once the burst is spent; the rest are dropped (and counted). */
const LOG_PER_SECOND = 50;

/**
 * Bounds the log messages an upstream can push at Sluice's clients: each
 * relayed message waits in a client's buffer until read, and logs, unlike
 * answers, may be dropped. Dropped messages are counted in a debug line.
 */
export class LogBudget {
  private tokens = LOG_BURST;
  private refilled: number;
  private dropped = 0;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.refilled = now();
  }

  /** Whether one more message may be relayed now; returns how many were dropped before it when it may. */
  take(): { ok: true; droppedBefore: number } | { ok: false } {
    const now = this.now();
    this.tokens = Math.min(LOG_BURST, this.tokens + ((now - this.refilled) * LOG_PER_SECOND) / 1_000);
    this.refilled = now;
    if (this.tokens < 1) {
      this.dropped++;
      return { ok: false };
    }
    this.tokens--;
    const droppedBefore = this.dropped;
    this.dropped = 0;
    return { ok: true, droppedBefore };
  }
}

export interface FeatureWiring {
  readonly upstream: string;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly relay: CallRelay;
  readonly catalog: FeatureCatalog | undefined;
  readonly redact: (text: string) => string;
  /** The upstream said its resources or prompts changed: list them again. */
  readonly featuresChanged: (kind: FeatureList) => void;
}

/** Registers what an upstream may send Sluice besides answers: its requests, log messages and change notifications. */
export function wireUpstreamClient(client: Client, wiring: FeatureWiring): void {
  const { relay } = wiring;
  const logs = new LogBudget();
  const asks = new AskShares(wiring);
  const callLogs = new CallLogBytes(wiring);
  client.setRequestHandler('sampling/createMessage', (request, ctx) =>
    ask(client, wiring, asks, ctx, request.params, (caller, options) =>
      caller.mcpReq.send({ method: 'sampling/createMessage', params: request.params }, options),
    ),
  );
  client.setRequestHandler('elicitation/create', (request, ctx) =>
    ask(client, wiring, asks, ctx, request.params, (caller, options) =>
      caller.mcpReq.send({ method: 'elicitation/create', params: request.params }, options),
    ),
  );
  client.setRequestHandler('roots/list', (request, ctx) =>
    ask(client, wiring, asks, ctx, request.params, (caller, options) =>
      caller.mcpReq.send({ method: 'roots/list', params: request.params }, options),
    ),
  );
  client.setNotificationHandler('notifications/message', (notification) => {
    const admitted = logs.take();
    if (!admitted.ok) return;
    if (admitted.droppedBefore > 0)
      wiring.logger.debug(
        { event: 'upstream.logs_dropped', upstream: wiring.upstream, dropped: admitted.droppedBefore },
        'log messages of an upstream were dropped: it sent them faster than they are relayed',
      );
    const params = notification.params;
    // Measured once the rate admits it: a flood costs no more than its parse.
    const bytes = logMessageBytes(params);
    if (bytes === undefined) {
      wiring.logger.debug(
        { event: 'upstream.log_too_large', upstream: wiring.upstream, max: MAX_LOG_MESSAGE_BYTES },
        `a log message of upstream "${wiring.upstream}" was dropped: it is over ${MAX_LOG_MESSAGE_BYTES} bytes`,
      );
      return;
    }
    // On a call's answer stream (Sluice's HTTP transport), the log message is that call's, whatever else is in flight.
    const marked = logCallerOf(client, params);
    const caller = marked ?? relay.caller();
    if (caller !== undefined) {
      if (callLogs.spend(caller, bytes)) relayLog(caller, params);
      return;
    }
    if (relay.inFlight === 0) wiring.catalog?.broadcastLog(params);
  });
  client.setNotificationHandler('notifications/resources/updated', (notification) =>
    wiring.catalog?.resourceUpdated(wiring.upstream, notification.params.uri),
  );
  client.setNotificationHandler('notifications/resources/list_changed', () => wiring.featuresChanged('resources'));
  client.setNotificationHandler('notifications/prompts/list_changed', () => wiring.featuresChanged('prompts'));
}

/**
 * The caller of the call an upstream's request serves, when the transport
 * knows it: a Streamable HTTP upstream sends a call's requests on that
 * call's answer stream, and Sluice's own HTTP transport remembers whose call
 * each stream answers.
 */
function relatedCallerOf(client: Client, id: string | number): ServerContext | undefined {
  const transport = client.transport;
  return transport instanceof NodeHttpClientTransport ? transport.relatedCaller(id) : undefined;
}

/** The caller of the call whose answer stream carried a log message, when the transport knows it (see `relatedCallerOf`). */
function logCallerOf(client: Client, params: LogMessage): ServerContext | undefined {
  const transport = client.transport;
  return transport instanceof NodeHttpClientTransport ? transport.logCaller(params) : undefined;
}

/**
 * The requests of one upstream held for each call's client: at most
 * `MAX_CLIENT_REQUESTS_PER_CALL` a call, and `MAX_CLIENT_REQUEST_BYTES_PER_CALL`
 * of their params in all. A call whose upstream went past either is logged
 * once (`upstream.requests_refused`).
 */
class AskShares {
  private readonly held = new WeakMap<ServerContext, { count: number; bytes: number }>();
  private readonly warned = new WeakSet<ServerContext>();

  constructor(private readonly wiring: FeatureWiring) {}

  /** Takes a place for one request relayed to `caller`'s client; returns how to give it back, or throws the refusal. */
  take(caller: ServerContext, method: string, params: unknown): () => void {
    const held = this.held.get(caller) ?? { count: 0, bytes: 0 };
    const bytes = jsonBytes(params);
    if (held.count >= MAX_CLIENT_REQUESTS_PER_CALL)
      this.refuse(caller, method, `${MAX_CLIENT_REQUESTS_PER_CALL} requests`);
    if (held.bytes + bytes > MAX_CLIENT_REQUEST_BYTES_PER_CALL)
      this.refuse(caller, method, `${MAX_CLIENT_REQUEST_BYTES_PER_CALL} bytes of requests`);
    held.count++;
    held.bytes += bytes;
    this.held.set(caller, held);
    return () => {
      held.count--;
      held.bytes -= bytes;
    };
  }

  private refuse(caller: ServerContext, method: string, bound: string): never {
    if (!this.warned.has(caller)) {
      this.warned.add(caller);
      this.wiring.logger.warn(
        {
          event: 'upstream.requests_refused',
          upstream: this.wiring.upstream,
          method,
          max: MAX_CLIENT_REQUESTS_PER_CALL,
          maxBytes: MAX_CLIENT_REQUEST_BYTES_PER_CALL,
        },
        `upstream "${this.wiring.upstream}" sent more than ${bound} at once for one call's client; the rest are refused`,
      );
    }
    throw new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `Sluice relays at most ${bound} at once to the client of one call: answer with what earlier ones returned`,
    );
  }
}

/** Relays a request of the upstream to the caller of the call it serves: the related one, or the one in flight. */
async function ask<T>(
  client: Client,
  wiring: FeatureWiring,
  asks: AskShares,
  ctx: ClientContext,
  params: unknown,
  send: (caller: ServerContext, options: { signal: AbortSignal; timeout: number }) => Promise<T>,
): Promise<T> {
  const caller = relatedCallerOf(client, ctx.mcpReq.id) ?? wiring.relay.caller();
  const method = ctx.mcpReq.method;
  if (caller === undefined) {
    const why =
      wiring.relay.inFlight === 0
        ? 'no call of this upstream is in flight'
        : 'several calls of this upstream are in flight and the request does not say which it serves';
    // Servers ask for roots as soon as they start, outside any call: expected, so not a warning.
    const expected = method === 'roots/list' && wiring.relay.inFlight === 0;
    wiring.logger[expected ? 'debug' : 'warn'](
      { event: 'upstream.request_unrouted', upstream: wiring.upstream, method, inFlight: wiring.relay.inFlight },
      `a ${method} request of upstream "${wiring.upstream}" was refused: ${why}`,
    );
    throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `Sluice cannot relay ${method}: ${why}`);
  }
  const release = asks.take(caller, method, params);
  try {
    return await send(caller, {
      signal: AbortSignal.any([ctx.mcpReq.signal, caller.mcpReq.signal]),
      timeout: wiring.timeoutMs,
    });
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    if (error instanceof SdkError && error.code === SdkErrorCode.CapabilityNotSupported)
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, messageOf(error));
    // A relayed answer is the client's; an error from the server side carries its own code.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'number' && Number.isInteger(code))
      throw new ProtocolError(code, wiring.redact(messageOf(error)), (error as { data?: unknown }).data);
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The client did not answer ${method}: ${wiring.redact(messageOf(error))}`,
    );
  } finally {
    release();
  }
}

/** The UTF-8 bytes of a log message's params as JSON, or undefined when over `MAX_LOG_MESSAGE_BYTES`. */
function logMessageBytes(params: LogMessage): number | undefined {
  const bytes = jsonBytes(params);
  return bytes > MAX_LOG_MESSAGE_BYTES ? undefined : bytes;
}

/**
 * The log bytes relayed to each call's client, at most
 * `MAX_LOG_BYTES_PER_CALL` a call; a call that reaches it is logged once
 * (`upstream.call_logs_dropped`, debug) and hears no more.
 */
class CallLogBytes {
  private readonly spent = new WeakMap<ServerContext, number>();

  constructor(private readonly wiring: FeatureWiring) {}

  /** Whether a message of `bytes` may go to `caller`'s client; counts it when it may. */
  spend(caller: ServerContext, bytes: number): boolean {
    const spent = this.spent.get(caller) ?? 0;
    if (spent + bytes <= MAX_LOG_BYTES_PER_CALL) {
      this.spent.set(caller, spent + bytes);
      return true;
    }
    if (spent <= MAX_LOG_BYTES_PER_CALL) {
      // Past the budget for good: one line, and every later message of this call is dropped without a count.
      this.spent.set(caller, Number.POSITIVE_INFINITY);
      this.wiring.logger.debug(
        { event: 'upstream.call_logs_dropped', upstream: this.wiring.upstream, max: MAX_LOG_BYTES_PER_CALL },
        `upstream "${this.wiring.upstream}" sent one call's client ${MAX_LOG_BYTES_PER_CALL} bytes of log messages; the rest of that call's are dropped`,
      );
    }
    return false;
  }
}

/** Sends an upstream's log message on the caller's call, filtered by the level that caller asked for. */
function relayLog(caller: ServerContext, params: LogMessage): void {
  const envelope = caller.mcpReq.envelope as Readonly<Record<string, unknown>> | undefined;
  const threshold: LogLevel | undefined =
    envelope !== undefined ? (envelope[LOG_LEVEL_META_KEY] as LogLevel | undefined) : sessionLevelOf(caller.sessionId);
  // A 2026-07-28 request without a level asks for no log messages.
  if (envelope !== undefined && threshold === undefined) return;
  if (threshold !== undefined && levelRank(params.level) < levelRank(threshold)) return;
  caller.mcpReq.notify({ method: 'notifications/message', params }).catch(() => {});
}

/**
 * Lists what an upstream offers besides tools, as far as its capabilities say
 * it offers anything; `read` reads each list within its bounds and reports
 * what it leaves out.
 */
export async function listFeatures(
  client: Client,
  read: ListReader,
  exposedName: (original: string) => string,
  source: ImportSource,
  exclusion?: FeatureSnapshot['exclusion'],
  denial?: FeatureSnapshot['denial'],
): Promise<FeatureSnapshot> {
  const capabilities = client.getServerCapabilities() ?? {};
  const resources = capabilities.resources ? await read('resources', 'resources/list', (page) => page.resources) : [];
  const templates = capabilities.resources
    ? await read('resource templates', 'resources/templates/list', (page) => page.resourceTemplates)
    : [];
  const prompts = capabilities.prompts ? await read('prompts', 'prompts/list', (page) => page.prompts) : [];
  return {
    capabilities,
    resources,
    templates,
    prompts,
    exposedName,
    source,
    ...(exclusion ? { exclusion } : {}),
    ...(denial ? { denial } : {}),
  };
}

function noop(): void {}
