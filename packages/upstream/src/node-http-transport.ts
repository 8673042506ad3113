import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import {
  PROTOCOL_VERSION_META_KEY,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  isInitializeRequest,
  isInitializedNotification,
  parseJSONRPCMessage,
} from '@modelcontextprotocol/client';
import type { JSONRPCMessage, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import type { ServerContext } from '@modelcontextprotocol/server';
import { namesMethod } from '@sluice/core/internal';
import { MessageMeter } from './message-meter.js';
import type { ResponseBudget } from './response-limit.js';
import { ResponseTooLargeError, messageCap } from './response-limit.js';
import { SseParser } from './sse-parser.js';
import type { UpstreamAuthorizer } from './oauth/authorizer.js';

/** The per-request header that carries a call's response budget to the transport; never sent. */
const BUDGET_HEADER = 'x-sluice-response-budget';
/** Headers a per-request header may not override (the transport owns them). */
const RESERVED = new Set([
  'authorization',
  'dpop',
  'content-type',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
]);
const FIRST_MODERN_PROTOCOL_VERSION = '2026-07-28';
const NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};
/** As the SDK's client: a lost event stream is resumed twice at most, 1 s then 1.5 s later (or as the server's `retry` says). */
const RECONNECT = { initialMs: 1_000, maxMs: 30_000, grow: 1.5, maxRetries: 2 };
/** How much of an error answer's body is read, for its message. */
const MAX_ERROR_BODY = 4_096;
/** Upstream requests awaiting an answer whose caller is remembered; past this, the oldest are forgotten. */
const MAX_RELATED = 1_024;
/**
 * The `_meta` key that marks an upstream's log message with the call whose
 * answer stream carried it; set only by this transport (an upstream's own
 * value under it is removed) and taken off again by `logCaller`.
 */
export const LOG_CALLER_META = 'io.sluice/caller';

export interface NodeHttpTransportOptions {
  /** Sent with every request (authorization and the like). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The largest single message read: a JSON answer as a whole, an event stream event by event. Unset: 10 MiB,
   * or a call's read budget when its tool allows more.
   */
  readonly maxMessageBytes?: number;
  /** Supplies the `Authorization` header (an OAuth token), and a new one once when the upstream answers 401. */
  readonly auth?: UpstreamAuthorizer | undefined;
}

interface StreamOptions {
  readonly resumptionToken?: string | undefined;
  readonly onresumptiontoken?: ((token: string) => void) | undefined;
  readonly replayMessageId?: string | number | undefined;
  readonly requestSignal?: AbortSignal | undefined;
  readonly onRequestStreamEnd?: (() => void) | undefined;
  /** Ids of the requests this stream answers, for a synthetic error if it is cut off. */
  readonly requestIds?: readonly (string | number)[];
  readonly budget?: ResponseBudget | undefined;
  /** The caller of the call this stream answers: requests the upstream sends on it serve that call. */
  readonly caller?: ServerContext | undefined;
}

/** What `carry` ties to one call: its response budget and, when known, its caller. */
interface Carried {
  readonly budget: ResponseBudget;
  readonly caller: ServerContext | undefined;
}

type Incoming = http.IncomingMessage;

/**
 * The MCP Streamable HTTP client transport over node:http keep-alive
 * sockets. It behaves as the SDK's client transport does for a client with
 * static headers (session id, protocol-version and body-derived headers,
 * the standalone GET stream, resumption of a lost event stream by its last
 * event id, per-request cancellation, session termination), without web
 * streams: a JSON answer is read into one buffer and parsed once, and event
 * streams are parsed only when the upstream answers with one.
 *
 * Every response is held to `maxMessageBytes` per message as it arrives; a
 * call's response budget (see `carry`) also counts the bytes of its answer.
 * Past either, reading stops and the socket is dropped.
 */
export class NodeHttpClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly hasPerRequestStream = true;

  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  private readonly open = new Set<http.ClientRequest>();
  private readonly carried = new Map<string, Carried>();
  /** The upstream's requests that arrived on a call's answer stream, by their id, and that call's caller. */
  private readonly related = new Map<string | number, ServerContext>();
  /** Log messages that arrived on a call's answer stream, by the mark they carry, until their handler takes them. */
  private readonly logCallers = new Map<string, ServerContext>();
  private nextBudget = 0;
  private nextLog = 0;
  private session: string | undefined;
  private version: string | undefined;
  private started = false;
  private closed = false;
  private retryMs: number | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: URL,
    private readonly options: NodeHttpTransportOptions,
  ) {
    const secure = url.protocol === 'https:';
    this.agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    this.request = secure ? https.request : http.request;
  }

  get sessionId(): string | undefined {
    return this.session;
  }

  get protocolVersion(): string | undefined {
    return this.version;
  }

  setProtocolVersion(version: string): void {
    this.version = version;
  }

  start(): Promise<void> {
    if (this.started) throw new Error('NodeHttpClientTransport already started');
    this.started = true;
    return Promise.resolve();
  }

  /**
   * Per-request headers that tie the request sent with them to `budget`:
   * the bytes of its answer are counted against it. A request the upstream
   * sends on that answer's event stream serves this call, and `relatedCaller`
   * names `caller` for it. Pass them as the request's `headers`; `release`
   * them once the call has ended.
   */
  carry(budget: ResponseBudget, caller?: ServerContext): Readonly<Record<string, string>> {
    const key = String(this.nextBudget++);
    this.carried.set(key, { budget, caller });
    return { [BUDGET_HEADER]: key };
  }

  release(headers: Readonly<Record<string, string>>): void {
    const key = headers[BUDGET_HEADER];
    if (key !== undefined) this.carried.delete(key);
  }

  /**
   * The caller of the call whose answer stream carried the upstream's request
   * `id` (the stream a Streamable HTTP server sends a call's related requests
   * on), until that request is answered; undefined when it came on another
   * stream.
   */
  relatedCaller(id: string | number): ServerContext | undefined {
    return this.related.get(id);
  }

  /**
   * The caller of the call whose answer stream carried this log message, if
   * one did; takes the mark off the message's params (it is Sluice's, not the
   * upstream's) and forgets it.
   */
  logCaller(params: { _meta?: Record<string, unknown> }): ServerContext | undefined {
    const meta = params._meta;
    const mark = meta?.[LOG_CALLER_META];
    if (meta === undefined || typeof mark !== 'string') return undefined;
    unmark(params, meta);
    const caller = this.logCallers.get(mark);
    this.logCallers.delete(mark);
    return caller;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    for (const request of this.open) request.destroy();
    this.open.clear();
    this.agent.destroy();
    this.carried.clear();
    this.related.clear();
    this.logCallers.clear();
    this.onclose?.();
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    try {
      await this.post(message, options);
    } catch (error) {
      if (options?.requestSignal?.aborted !== true) this.onerror?.(asError(error));
      throw error;
    }
  }

  /** Ends the session upstream with a DELETE (a 405 means the server keeps sessions to itself). */
  async terminateSession(): Promise<void> {
    if (this.session === undefined) return;
    const response = await this.authorizedExchange('DELETE', this.commonHeaders(), undefined, undefined);
    response.resume();
    const status = response.statusCode ?? 0;
    if (status >= 300 && status !== 405)
      throw new SdkHttpError(SdkErrorCode.ClientHttpFailedToTerminateSession, 'Failed to terminate session', {
        status,
        statusText: response.statusMessage ?? '',
      });
    this.session = undefined;
  }

  private async post(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    if (options?.resumptionToken) {
      this.openStream({
        resumptionToken: options.resumptionToken,
        onresumptiontoken: options.onresumptiontoken,
        replayMessageId: !Array.isArray(message) && 'id' in message && 'method' in message ? message.id : undefined,
        requestSignal: options.requestSignal,
      });
      return;
    }
    const messages = Array.isArray(message) ? message : [message];
    // An answer to one of the upstream's requests: the request no longer needs its caller.
    for (const m of messages) if ('id' in m && !('method' in m) && m.id !== undefined) this.related.delete(m.id);
    // Raised before a byte is written (a BigInt, a cycle): the caller can tell it from a failed connection.
    const body = JSON.stringify(message);
    const headers = this.commonHeaders();
    const handshake = messages.some((m) => namesMethod(m, 'initialize') && isInitializeRequest(m));
    if (handshake) delete headers['mcp-session-id'];
    bodyDerivedHeaders(headers, message);
    let carried: Carried | undefined;
    for (const [name, value] of Object.entries(options?.headers ?? {})) {
      if (name === BUDGET_HEADER) {
        carried = this.carried.get(value);
        continue;
      }
      if (!RESERVED.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
    }
    headers['content-type'] = 'application/json';
    headers.accept = 'application/json, text/event-stream';
    headers['content-length'] = String(Buffer.byteLength(body));
    const response = await this.authorizedExchange('POST', headers, body, options?.requestSignal);
    const status = response.statusCode ?? 0;
    if (handshake && status >= 200 && status < 300) {
      const session = response.headers['mcp-session-id'];
      this.session = typeof session === 'string' && session !== '' ? session : undefined;
    }
    if (status < 200 || status >= 300) return this.refused(response, message);
    if (status === 202) {
      response.resume();
      if (messages.some((m) => isInitializedNotification(m))) this.openStream({});
      return;
    }
    const requestIds = messages.flatMap((m) => ('method' in m && 'id' in m ? [m.id] : []));
    if (requestIds.length === 0) return void response.resume();
    const type = mediaType(response.headers['content-type']);
    if (type === 'text/event-stream') {
      this.readEvents(response, {
        onresumptiontoken: options?.onresumptiontoken,
        requestSignal: options?.requestSignal,
        onRequestStreamEnd: options?.onRequestStreamEnd,
        requestIds,
        budget: carried?.budget,
        caller: carried?.caller,
      });
      return;
    }
    if (type === 'application/json') {
      const budget = carried?.budget;
      const text = await this.readWhole(response, budget, messageCap(this.options.maxMessageBytes, budget));
      const data: unknown = JSON.parse(text);
      for (const item of Array.isArray(data) ? data : [data]) this.onmessage?.(asMessage(item));
      return;
    }
    response.resume();
    throw new SdkError(SdkErrorCode.ClientHttpUnexpectedContent, `Unexpected content type: ${String(type)}`, {
      contentType: response.headers['content-type'],
    });
  }

  private commonHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.options.headers ?? {})) headers[name.toLowerCase()] = value;
    if (this.session !== undefined) headers['mcp-session-id'] = this.session;
    if (this.version !== undefined) headers['mcp-protocol-version'] = this.version;
    return headers;
  }

  /**
   * `exchange` with the authorizer's header; a 401 gets the request sent once
   * more if the authorizer obtained a new token. Without an authorizer, `exchange` itself.
   */
  private async authorizedExchange(
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Incoming> {
    const auth = this.options.auth;
    if (auth === undefined) return this.exchange(method, headers, body, signal);
    headers.authorization = await auth.authorization();
    const response = await this.exchange(method, headers, body, signal);
    if (response.statusCode !== 401 || !(await auth.rejected(headers.authorization))) return response;
    response.resume();
    headers.authorization = await auth.authorization();
    return this.exchange(method, headers, body, signal);
  }

  /** Sends one request and resolves with the response head; the body is the caller's to read. */
  private exchange(
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
    retried = false,
  ): Promise<Incoming> {
    if (this.closed) return Promise.reject(new SdkError(SdkErrorCode.NotConnected, 'Not connected'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const request = this.request(this.url, { method, headers, agent: this.agent });
      this.open.add(request);
      const onAbort = () => request.destroy(abortError(signal));
      signal?.addEventListener('abort', onAbort, { once: true });
      request.once('close', () => {
        this.open.delete(request);
        signal?.removeEventListener('abort', onAbort);
      });
      let answered = false;
      request.once('response', (response) => {
        answered = true;
        resolve(response);
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (this.closed) {
          reject(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
          return;
        }
        // A kept-alive socket the server closed while idle fails before the request is read: send it once more.
        if (!retried && !answered && request.reusedSocket && error.code === 'ECONNRESET' && !signal?.aborted) {
          resolve(this.exchange(method, headers, body, signal, true));
          return;
        }
        reject(error);
      });
      request.end(body);
    });
  }

  /** Reads a JSON answer whole, held to the message cap and the call's budget. */
  private readWhole(response: Incoming, budget: ResponseBudget | undefined, cap: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.byteLength;
        if (budget !== undefined && !budget.take(chunk.byteLength)) {
          response.destroy();
          reject(new ResponseTooLargeError(budget.limit));
          return;
        }
        if (bytes > cap) {
          budget?.overflowMessage(cap);
          response.destroy();
          reject(new ResponseTooLargeError(cap));
          return;
        }
        chunks.push(chunk);
      });
      response.once('end', () => resolve(Buffer.concat(chunks, bytes).toString('utf8')));
      response.on('error', reject);
      response.once('close', () => {
        if (!response.complete) reject(new SdkError(SdkErrorCode.ConnectionClosed, 'The upstream closed the response'));
      });
    });
  }

  /** An answer outside 2xx: an error for the caller (or, for a modern-era request, the JSON-RPC error it carries). */
  private async refused(response: Incoming, message: JSONRPCMessage | JSONRPCMessage[]): Promise<void> {
    const status = response.statusCode ?? 0;
    const text = await readPrefix(response, MAX_ERROR_BODY);
    if (status === 400 && isModernEnveloped(message)) {
      const parsed = tryParse(text);
      const ids = (Array.isArray(message) ? message : [message]).flatMap((m) => ('id' in m ? [m.id] : []));
      if (parsed !== undefined && 'error' in parsed && 'id' in parsed && ids.includes(parsed.id)) {
        this.onmessage?.(parsed);
        return;
      }
    }
    const location = response.headers.location;
    const reason =
      status >= 300 && status < 400 && location !== undefined
        ? `the server redirected to ${location}, which is not followed`
        : text;
    throw new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${reason}`, {
      status,
      statusText: response.statusMessage ?? '',
      text,
    });
  }

  /** Opens (or resumes) an event stream with a GET: the standalone stream, or a resumed answer. */
  private openStream(options: StreamOptions, attempt = 0): void {
    if (this.closed) return;
    const headers = this.commonHeaders();
    headers.accept = 'text/event-stream';
    if (options.resumptionToken) headers['last-event-id'] = options.resumptionToken;
    this.authorizedExchange('GET', headers, undefined, options.requestSignal)
      .then(
        (response) => {
          const status = response.statusCode ?? 0;
          if (status === 405) {
            response.resume();
            options.onRequestStreamEnd?.();
            return;
          }
          if (status < 200 || status >= 300) {
            response.resume();
            throw new SdkHttpError(
              SdkErrorCode.ClientHttpFailedToOpenStream,
              `Failed to open SSE stream: ${response.statusMessage ?? ''}`,
              { status, statusText: response.statusMessage ?? '' },
            );
          }
          this.readEvents(response, options, true);
        },
        (error: unknown) => {
          if (this.closed || options.requestSignal?.aborted) return;
          this.onerror?.(asError(error));
          if (options.resumptionToken !== undefined) this.reconnect(options, attempt + 1);
        },
      )
      .catch((error: unknown) => this.onerror?.(asError(error)));
  }

  /** Reads an event stream: each `message` event is a JSON-RPC message, counted against the cap and budget. */
  private readEvents(response: Incoming, options: StreamOptions, reconnectable = false): void {
    const meter = new MessageMeter(true, messageCap(this.options.maxMessageBytes, options.budget));
    const decoder = new StringDecoder('utf8');
    let lastEventId: string | undefined;
    let answered = false;
    let failed = false;
    // A notification's handler runs a tick after it is delivered: what follows it on the stream (say, the
    // result after the last progress note) waits for the next turn, so that the handler sees its call open.
    const waiting: JSONRPCMessage[] = [];
    let held = false;
    const isHeld = () => held;
    const deliver = (message: JSONRPCMessage) => {
      if (held) return void waiting.push(message);
      if (options.caller !== undefined && 'method' in message && 'id' in message)
        this.relate(message.id, options.caller);
      if ('method' in message && message.method === 'notifications/message') this.markLog(message, options.caller);
      this.onmessage?.(message);
      if ('method' in message && !('id' in message)) {
        held = true;
        setImmediate(release);
      }
    };
    const release = () => {
      held = false;
      for (let next = waiting.shift(); next !== undefined; next = isHeld() ? undefined : waiting.shift()) deliver(next);
    };
    const parser = new SseParser(
      (event) => {
        if (event.id) {
          lastEventId = event.id;
          options.onresumptiontoken?.(event.id);
        }
        if (!event.data || (event.event && event.event !== 'message')) return;
        try {
          const message = asMessage(JSON.parse(event.data));
          if ('id' in message && !('method' in message)) {
            answered = true;
            if (options.replayMessageId !== undefined) message.id = options.replayMessageId;
          }
          deliver(message);
        } catch (error) {
          this.onerror?.(asError(error));
        }
      },
      (ms) => (this.retryMs = ms),
    );
    const budget = options.budget;
    response.on('data', (chunk: Buffer) => {
      if (failed) return;
      let error: ResponseTooLargeError | undefined;
      if (budget !== undefined && !budget.take(chunk.byteLength)) error = new ResponseTooLargeError(budget.limit);
      else if (!meter.add(chunk)) {
        budget?.overflowMessage(meter.cap);
        error = new ResponseTooLargeError(meter.cap);
      }
      if (error === undefined) {
        parser.feed(decoder.write(chunk));
        return;
      }
      failed = true;
      response.destroy();
      this.onerror?.(error);
      // The calls this stream answers end now instead of waiting for their timeout.
      for (const id of options.requestIds ?? [])
        deliver({ jsonrpc: '2.0', id, error: { code: -32603, message: error.message } });
    });
    response.once('close', () => {
      if (failed || this.closed || options.requestSignal?.aborted) return;
      parser.feed(decoder.end());
      if (!answered && (reconnectable || lastEventId !== undefined)) {
        if (!response.complete) this.onerror?.(new Error('SSE stream disconnected'));
        this.reconnect({ ...options, resumptionToken: lastEventId }, 0);
      } else options.onRequestStreamEnd?.();
    });
  }

  /** Marks a log message with the call whose stream carried it (see `logCaller`); removes any mark the upstream set. */
  private markLog(message: JSONRPCMessage, caller: ServerContext | undefined): void {
    // The upstream's JSON, unchecked yet: a `_meta` that is not an object is left for the SDK to refuse.
    const params: unknown = (message as { params?: unknown }).params;
    if (params === null || typeof params !== 'object') return;
    const holder = params as { _meta?: unknown };
    const meta = holder._meta;
    if (meta !== undefined && (meta === null || typeof meta !== 'object' || Array.isArray(meta))) return;
    if (meta !== undefined && LOG_CALLER_META in meta) unmark(holder, meta);
    if (caller === undefined) return;
    const mark = String(this.nextLog++);
    if (this.logCallers.size >= MAX_RELATED) {
      const oldest = this.logCallers.keys().next();
      if (oldest.done !== true) this.logCallers.delete(oldest.value);
    }
    this.logCallers.set(mark, caller);
    holder._meta = { ...(holder._meta as Record<string, unknown> | undefined), [LOG_CALLER_META]: mark };
  }

  private relate(id: string | number, caller: ServerContext): void {
    this.related.delete(id);
    if (this.related.size >= MAX_RELATED) {
      const oldest = this.related.keys().next();
      if (oldest.done !== true) this.related.delete(oldest.value);
    }
    this.related.set(id, caller);
  }

  private reconnect(options: StreamOptions, attempt: number): void {
    if (this.closed || options.requestSignal?.aborted) return;
    if (attempt >= RECONNECT.maxRetries) {
      this.onerror?.(new Error(`Maximum reconnection attempts (${RECONNECT.maxRetries}) exceeded.`));
      options.onRequestStreamEnd?.();
      return;
    }
    const delay = this.retryMs ?? Math.min(RECONNECT.initialMs * RECONNECT.grow ** attempt, RECONNECT.maxMs);
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.openStream(options, attempt), delay);
    this.reconnectTimer.unref();
  }
}

/** The first `max` bytes of a body (the rest is not read: the socket is dropped), as text. */
function readPrefix(response: Incoming, max: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const done = () => resolve(Buffer.concat(chunks).subarray(0, max).toString('utf8'));
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.byteLength;
      if (bytes < max) return;
      response.destroy();
      done();
    });
    response.on('error', done);
    response.once('end', done);
    response.once('close', done);
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
}

function mediaType(header: string | undefined): string | undefined {
  return header?.split(';', 1)[0]?.trim().toLowerCase();
}

function tryParse(text: string): JSONRPCMessage | undefined {
  try {
    return asMessage(JSON.parse(text));
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A parsed value as a JSON-RPC message: a cheap look at its shape first,
 * and the SDK's full schema only when that look fails (for its error).
 */
function asMessage(value: unknown): JSONRPCMessage {
  if (isObject(value) && value.jsonrpc === '2.0') {
    const id = value.id;
    const hasId = typeof id === 'string' || typeof id === 'number';
    if (typeof value.method === 'string' && (value.params === undefined || isObject(value.params)))
      return value as unknown as JSONRPCMessage;
    if (hasId && (isObject(value.result) || isObject(value.error))) return value as unknown as JSONRPCMessage;
  }
  return parseJSONRPCMessage(value);
}

function isModernEnveloped(message: JSONRPCMessage | JSONRPCMessage[]): boolean {
  const version = envelopeVersion(message);
  return version !== undefined && version >= FIRST_MODERN_PROTOCOL_VERSION;
}

function envelopeVersion(message: JSONRPCMessage | JSONRPCMessage[]): string | undefined {
  if (Array.isArray(message) || !('method' in message) || !('id' in message)) return undefined;
  const meta = message.params?._meta;
  const version = meta?.[PROTOCOL_VERSION_META_KEY];
  return typeof version === 'string' ? version : undefined;
}

/** A modern-era request names its version, method and target in headers as well as in its body. */
function bodyDerivedHeaders(headers: Record<string, string>, message: JSONRPCMessage | JSONRPCMessage[]): void {
  const version = envelopeVersion(message);
  if (version === undefined || Array.isArray(message) || !('method' in message)) return;
  headers['mcp-protocol-version'] = version;
  headers['mcp-method'] = message.method;
  const field = Object.hasOwn(NAME_SOURCE, message.method) ? NAME_SOURCE[message.method] : undefined;
  const value = field === undefined ? undefined : message.params?.[field];
  if (typeof value === 'string') headers['mcp-name'] = encodeFieldValue(value);
}

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';

/** A plain ASCII field value as it is; anything else as `=?base64?...?=` of its UTF-8. */
function encodeFieldValue(value: string): string {
  const plain =
    value.length > 0 &&
    value === value.trim() &&
    !(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX)) &&
    /^[\t\x20-\x7e]*$/.test(value);
  return plain ? value : `${BASE64_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${BASE64_SUFFIX}`;
}

/** Takes Sluice's log mark off a message's params, and the `_meta` it leaves empty. */
function unmark(params: { _meta?: unknown }, meta: Record<string, unknown>): void {
  const rest = Object.fromEntries(Object.entries(meta).filter(([key]) => key !== LOG_CALLER_META));
  if (Object.keys(rest).length === 0) delete params._meta;
  else params._meta = rest;
}
