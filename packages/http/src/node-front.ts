import type http from 'node:http';
import type { Socket } from 'node:net';
import { rpcErrorBody } from '@sluice/core/internal';

/** A request body as read: its text, or that it was larger than the limit (and was not kept). */
export type BodyRead = { readonly tooLarge: true } | { readonly tooLarge: false; readonly text: string };

/**
 * An answer known whole when it is made, such as a refusal: written with one
 * `res.end`, without the web `Response` and body stream a `Response` costs
 * (a refused guess or stream, repeated thousands of times a second by an
 * attacker, paid more for its answer than for its check).
 */
export class PlainAnswer {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly body: string,
  ) {}

  /** Writes this answer whole, with its length; only ends the response when its head already went. */
  writeTo(res: http.ServerResponse): void {
    if (res.headersSent) return void res.end();
    res.writeHead(this.status, { ...this.headers, 'content-length': String(Buffer.byteLength(this.body)) });
    res.end(this.body);
  }
}

/** Whether a verdict is an answer to send (a web `Response` or a `PlainAnswer`) rather than a caller. */
export const isAnswer = (value: unknown): value is Response | PlainAnswer =>
  value instanceof PlainAnswer || value instanceof Response;

/** One request as the front hands it to a route: the web-standard view is built only when asked for. */
export interface FrontRequest {
  /** The method, upper-case. */
  readonly method: string;
  /** The `Authorization` header as a web `Headers` gives it (null when absent), read without building the request. */
  readonly authorization: string | null;
  /**
   * The request as the MCP SDK takes it: method, URL and headers, no body.
   * Built once. With `signal`, a request whose signal aborts when the
   * client goes away (built anew: only a handler that can act on it pays
   * for one, since a signal on a `Request` is kept until a finalizer runs).
   */
  web(options?: { readonly signal: true }): Request;
  /** Reads the body from the socket into one buffer (once), up to the front's limit. */
  readBody(): Promise<BodyRead>;
  /** The connection the request came on. */
  readonly socket: Socket;
  /** When the response last carried something other than an event-stream comment (a keep-alive), in ms since the epoch. */
  readonly lastEventAt: number;
  /** Closes the response and its connection: for a held stream the listener will no longer keep. */
  cut(): void;
  /** Runs `callback` once the response is over: written to its end, or the connection closed. */
  onDone(callback: () => void): void;
}

/** Handles one MCP request. */
export type FrontRoute = (request: FrontRequest) => Promise<Response | PlainAnswer>;

export interface NodeFrontOptions {
  readonly maxBodyBytes: number;
  readonly onerror: (error: Error) => void;
}

/**
 * Serves a `FrontRoute` from node:http. Unlike a generic adapter it does not
 * copy the body into a web stream (the route reads it from the socket into
 * one buffer and parses it once, handing the SDK the parsed value), gives a
 * request an `AbortSignal` only when the route asks for one, and writes a
 * response without a body without a stream.
 */
export function nodeFront(route: FrontRoute, options: NodeFrontOptions) {
  return async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const exchange = new Exchange(req, res, options.maxBodyBytes);
    let response: Response | PlainAnswer;
    try {
      response = await route(exchange);
    } catch (error) {
      options.onerror(error instanceof Error ? error : new Error(String(error)));
      response = new Response(rpcErrorBody(null, -32603, 'Internal server error'), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
    }
    await exchange.write(response);
  };
}

const COLON = 0x3a;

/** One request and its response: what the route sees, and what the client's going away must stop. */
class Exchange implements FrontRequest {
  readonly method: string;
  lastEventAt = Date.now();
  private request: Request | undefined;
  private abort: AbortController | undefined;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private gone = false;
  private readonly onClose = (): void => {
    this.gone = true;
    this.abort?.abort();
    // A pending read then ends as done, so the writer stops at once.
    this.reader?.cancel().catch(() => {});
  };

  constructor(
    private readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
    private readonly maxBodyBytes: number,
  ) {
    this.method = (req.method ?? 'GET').toUpperCase();
    res.once('close', this.onClose);
  }

  web(options?: { readonly signal: true }): Request {
    this.request ??= new Request(this.url(), { method: this.method, headers: this.headers() });
    if (options?.signal !== true) return this.request;
    this.abort ??= new AbortController();
    if (this.gone) this.abort.abort();
    return new Request(this.url(), { method: this.method, headers: this.request.headers, signal: this.abort.signal });
  }

  readBody(): Promise<BodyRead> {
    return readBody(this.req, this.maxBodyBytes);
  }

  get authorization(): string | null {
    return this.req.headers.authorization ?? null;
  }

  get socket(): Socket {
    return this.req.socket;
  }

  cut(): void {
    this.res.destroy();
  }

  onDone(callback: () => void): void {
    if (this.res.closed) callback();
    else this.res.once('close', callback);
  }

  private url(): string {
    const target = this.req.url ?? '/';
    // An absolute-form target (checked by the listener to name the Host header's host) is the URL itself.
    return target.startsWith('/') ? `http://${this.req.headers.host ?? 'localhost'}${target}` : target;
  }

  private headers(): Headers {
    const headers = new Headers();
    for (const [name, value] of Object.entries(this.req.headers)) {
      if (value === undefined || name.startsWith(':')) continue;
      if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      else headers.set(name, value);
    }
    return headers;
  }

  /** Writes the route's answer; an event stream as it comes, waiting for the socket to drain, until the client goes away. */
  async write(response: Response | PlainAnswer): Promise<void> {
    const { res } = this;
    if (response instanceof PlainAnswer) {
      res.off('close', this.onClose);
      if (this.gone) res.end();
      else response.writeTo(res);
      return;
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    if (res.headersSent || this.gone) {
      await response.body?.cancel().catch(() => {});
      this.finish();
      return;
    }
    res.writeHead(response.status, headers);
    // A held GET stream's headers go at once: its client then knows the stream is open before the first event.
    // Not a POST's answer stream: a client that saw its headers waits on it even when the server dies mid-call.
    if (this.method === 'GET' && headers['content-type']?.startsWith('text/event-stream') === true) res.flushHeaders();
    const body = response.body;
    if (body === null) {
      this.finish();
      return;
    }
    const reader = body.getReader();
    this.reader = reader;
    const backlog = new Backlog(res);
    try {
      for (;;) {
        const next = await reader.read();
        if (next.done || res.destroyed) break;
        // An event stream's comment (`: keepalive`) is not an event: it does not make a held stream active.
        if ((next.value as Uint8Array)[0] !== COLON) this.lastEventAt = Date.now();
        backlog.write(next.value as Uint8Array);
      }
    } catch {
      // The stream failed: what was written stands, and the response ends here.
    }
    backlog.end();
    this.finish();
  }

  /** Ends the response and lets go of the listeners this exchange put on it. */
  private finish(): void {
    this.res.off('close', this.onClose);
    this.reader = undefined;
    this.res.end();
  }
}

/**
 * Bytes an event stream may have waiting for a client that does not read
 * them before its notifications are dropped or folded (`Backlog`).
 */
export const MAX_UNSENT_STREAM_BYTES = 1024 * 1024;

/** Notifications folded per stream while its client is behind; more distinct ones are dropped. */
const MAX_FOLDED = 2_048;

/** Notifications a client that fell behind may miss: they are lines of a log or steps of a progress bar. */
const DROPPED = new Set(['notifications/message', 'notifications/progress']);

/** Notifications that only say something changed: one of each (per resource URI) tells a client behind as much as many. */
const FOLDED = new Set([
  'notifications/resources/updated',
  'notifications/resources/list_changed',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
]);

/**
 * What an event stream writes to a client, read off the route's stream as
 * it comes: a stream left unread is a queue nobody bounds, filled by
 * whatever an upstream sends. Once more than `MAX_UNSENT_STREAM_BYTES` wait
 * in the response's buffer (the client stopped reading), log and progress
 * notifications and keep-alive comments are dropped, and change
 * notifications are folded, the latest of each kind (and resource URI) kept
 * until the socket drains. Answers, requests and every other message are
 * written whatever the backlog: other bounds hold them (the calls in
 * flight, an upstream's requests per call).
 */
class Backlog {
  private readonly folded = new Map<string, Uint8Array>();
  private readonly onDrain = (): void => this.flush();

  constructor(private readonly res: http.ServerResponse) {
    res.on('drain', this.onDrain);
  }

  write(chunk: Uint8Array): void {
    if (this.res.writableLength <= MAX_UNSENT_STREAM_BYTES) {
      this.res.write(chunk);
      return;
    }
    if (chunk[0] === COLON) return; // a comment (keep-alive): the next one does as well
    const spare = spareKind(chunk);
    if (spare === undefined) this.res.write(chunk);
    else if (spare !== DROP) {
      // Re-inserted, so the folded go out in the order of their latest.
      this.folded.delete(spare);
      if (this.folded.size < MAX_FOLDED) this.folded.set(spare, chunk);
    }
  }

  /** Writes what was folded, once the client reads again. */
  private flush(): void {
    for (const [key, chunk] of this.folded) {
      if (this.res.destroyed || this.res.writableLength > MAX_UNSENT_STREAM_BYTES) return;
      this.folded.delete(key);
      this.res.write(chunk);
    }
  }

  /** The stream ended: what was folded goes last (at most `MAX_FOLDED` short events), then nothing more is kept. */
  end(): void {
    this.res.off('drain', this.onDrain);
    if (!this.res.destroyed) for (const chunk of this.folded.values()) this.res.write(chunk);
    this.folded.clear();
  }
}

const DROP = Symbol('drop');

const DECODER = new TextDecoder();

/**
 * How a chunk of an event stream may be spared when its client is behind:
 * `DROP`, a key to fold it under, or undefined when it must go. A chunk is
 * one event (`data: <message>` on its last line, as the SDK writes them);
 * one that is not a JSON-RPC notification, or cannot be read, must go.
 */
function spareKind(chunk: Uint8Array): string | typeof DROP | undefined {
  const text = DECODER.decode(chunk);
  const at = text.lastIndexOf('\ndata: ');
  const start = at === -1 ? (text.startsWith('data: ') ? 6 : -1) : at + 7;
  if (start === -1) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(text.slice(start));
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || 'id' in message) return undefined;
  const method = (message as { method?: unknown }).method;
  if (typeof method !== 'string') return undefined;
  if (DROPPED.has(method)) return DROP;
  if (!FOLDED.has(method)) return undefined;
  const uri = (message as { params?: { uri?: unknown } }).params?.uri;
  return typeof uri === 'string' ? `${method} ${uri}` : method;
}

/**
 * Reads a body into one buffer, up to `max` bytes. Past it, resolves at once
 * as too large: the answer is a refusal, and the listener bounds what more it
 * reads of that body (see `boundUnreadBody` in http.ts), so a body that never ends is
 * not read to its end.
 */
function readBody(req: http.IncomingMessage, max: number): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes <= max) return void chunks.push(chunk);
      chunks.length = 0;
      req.off('data', onData);
      resolve({ tooLarge: true });
    };
    req.on('data', onData);
    req.once('end', () => {
      resolve(
        bytes > max ? { tooLarge: true } : { tooLarge: false, text: Buffer.concat(chunks, bytes).toString('utf8') },
      );
    });
    req.once('error', reject);
    // A client that goes away mid-body: the read fails rather than waiting forever.
    req.once('close', () => {
      if (!req.complete) reject(new Error('The client closed the connection before sending the whole body'));
    });
  });
}
