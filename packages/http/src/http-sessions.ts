import { randomUUID } from 'node:crypto';
import {
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
} from '@modelcontextprotocol/server';
import type { Server as SdkServer } from '@modelcontextprotocol/server';
import { identityOf } from '@sluice/core';
import type { AuthInfo, Logger } from '@sluice/core';
import { namesMethod, rpcErrorBody, sendChange } from '@sluice/core/internal';
import type { ListChange } from '@sluice/core/internal';

interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly sdk: SdkServer;
  readonly opened: number;
  /** What the session is charged against the memory budget: its `initialize` request and a fixed overhead. */
  readonly bytes: number;
  lastSeen: number;
  /** Requests from the client not answered yet: a session with any is not idle. */
  inflight: number;
  /** Who opened the session; only they may use it. */
  readonly owner: string | undefined;
  /** Whether the client sent anything after `initialize`: until then the handshake is unfinished. */
  initialized: boolean;
}

/** What one session costs beyond its `initialize` request: SDK server, transport, maps (measured, rounded up). */
const SESSION_OVERHEAD_BYTES = 16 * 1024;

export interface SessionHost {
  readonly logger: Logger;
  createSdkServer(transport: 'http'): SdkServer;
}

export interface SessionOptions {
  /** A session unused this long is closed. */
  readonly idleMs: number;
  /** A session whose client sent nothing after `initialize` is closed after this long. */
  readonly handshakeMs: number;
  /** Sessions open at once; beyond it the least valuable session is evicted, or the initialize gets 503. */
  readonly maxSessions: number;
  /** Estimated memory of all sessions together; the same eviction applies. */
  readonly maxMemoryBytes: number;
  /** Largest `initialize` request that opens a session; a larger one gets 413. */
  readonly maxInitializeBytes: number;
  readonly maxBodyBytes: number;
}

/** A JSON-RPC error in an HTTP response, for requests no transport will take. */
export function rpcErrorResponse(status: number, code: number, message: string): Response {
  return new Response(rpcErrorBody(null, code, message), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/** The identity a session is bound to: method and subject, never a credential. */
function ownerOf(authInfo: AuthInfo | undefined): string | undefined {
  const identity = identityOf(authInfo);
  return identity ? `${identity.method}:${identity.subject}` : undefined;
}

/**
 * A 2025-11-25 `initialize` opens a session. Anything else named
 * `initialize` (malformed, or from a 2026-07-28 client, for which the method
 * no longer exists) goes to the stateless handler, which answers it under
 * its id.
 */
function opensSession(request: Request, body: unknown): boolean {
  return (
    request.method === 'POST' &&
    namesMethod(body, 'initialize') &&
    isInitializeRequest(body) &&
    !hasModernEnvelope(request, body)
  );
}

/** The first protocol revision without sessions or `initialize`. */
const FIRST_STATELESS_REVISION = '2026-07-28';

/**
 * A 2026-07-28 request names its protocol version in `_meta` and a header;
 * a 2025-11-25 `initialize` carries no `_meta` version and no such header.
 */
function hasModernEnvelope(request: Request, body: unknown): boolean {
  // Revisions are dates, so they compare as strings; some 2025 clients send the header on initialize too.
  const header = request.headers.get('mcp-protocol-version');
  if (header !== null && header >= FIRST_STATELESS_REVISION) return true;
  const meta = (body as { params?: { _meta?: unknown } }).params?._meta;
  return typeof meta === 'object' && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}

/**
 * Counts the client's requests until they are answered, by wrapping the
 * transport's message handler (set by the SDK on connect) and its `send`.
 */
function trackInflight(session: Session): void {
  const { transport } = session;
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && 'id' in message) session.inflight++;
    if (!('method' in message) || message.method !== 'initialize') session.initialized = true;
    session.lastSeen = Date.now();
    receive?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (!('method' in message) && 'id' in message) {
      session.inflight = Math.max(0, session.inflight - 1);
      session.lastSeen = Date.now();
    }
    return send(message, options);
  };
}

/**
 * Stateful sessions for 2025-11-25 clients. That protocol sends
 * server-to-client requests (elicitation, sampling) over a session's streams,
 * which a stateless handler cannot route back; 2026-07-28 needs none of this.
 */
export class LegacySessions {
  // In insertion order, which is opening order: eviction scans from the oldest.
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;
  private memory = 0;

  constructor(
    private readonly host: SessionHost,
    private readonly options: SessionOptions,
  ) {
    const every = Math.max(250, Math.min(options.idleMs, options.handshakeMs, 60_000) / 2);
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  /** Whether a request belongs here: it names a session, or opens one. */
  owns(request: Request, body: unknown): boolean {
    return request.headers.has('mcp-session-id') || opensSession(request, body);
  }

  /** `bodyBytes`: the size of the request's body, which an opening `initialize` is charged. */
  async handle(request: Request, body: unknown, bodyBytes = 0, authInfo?: AuthInfo): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    const options = { parsedBody: body, ...(authInfo ? { authInfo } : {}) };
    if (id !== null) {
      const session = this.sessions.get(id);
      // Another caller presenting this id is told the same as for an unknown id: nothing to probe.
      if (!session || session.owner !== ownerOf(authInfo))
        return rpcErrorResponse(404, -32001, 'Session not found: initialize a new session');
      session.lastSeen = Date.now();
      return session.transport.handleRequest(request, options);
    }
    if (bodyBytes > this.options.maxInitializeBytes) {
      return rpcErrorResponse(
        413,
        -32602,
        `The initialize request is too large: a session keeps its params, so at most ${this.options.maxInitializeBytes} bytes are accepted`,
      );
    }
    const bytes = bodyBytes + SESSION_OVERHEAD_BYTES;
    if (!this.makeRoom(bytes)) return rpcErrorResponse(503, -32000, 'Too many sessions: retry later');
    return this.open(request, options, bytes, ownerOf(authInfo));
  }

  /**
   * Evicts sessions until one more of `bytes` fits the count and the memory
   * budget: first unfinished handshakes (oldest first), then idle sessions
   * (least recently used first). A session with a request running is never
   * evicted; false when only such sessions are left.
   */
  private makeRoom(bytes: number): boolean {
    const fits = () =>
      this.sessions.size < this.options.maxSessions && this.memory + bytes <= this.options.maxMemoryBytes;
    while (!fits()) {
      let victim: [string, Session] | undefined;
      for (const entry of this.sessions) {
        if (!entry[1].initialized && entry[1].inflight === 0) {
          victim = entry;
          break;
        }
      }
      if (victim === undefined) {
        for (const entry of this.sessions) {
          if (entry[1].inflight > 0) continue;
          if (victim === undefined || entry[1].lastSeen < victim[1].lastSeen) victim = entry;
        }
      }
      if (victim === undefined) return false;
      this.evict(victim[0], victim[1], 'http.session_evicted', 'evicting a session to make room');
    }
    return true;
  }

  private evict(id: string, session: Session, event: string, message: string): void {
    this.forget(id);
    this.host.logger.debug({ event, session: id, initialized: session.initialized }, message);
    void session.sdk.close().catch(() => {});
  }

  private forget(id: string): void {
    const session = this.sessions.get(id);
    if (session === undefined) return;
    this.sessions.delete(id);
    this.memory -= session.bytes;
  }

  private async open(
    request: Request,
    options: { parsedBody: unknown; authInfo?: AuthInfo },
    bytes: number,
    owner: string | undefined,
  ): Promise<Response> {
    const sdk = this.host.createSdkServer('http');
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessioninitialized: (sessionId) => {
        this.sessions.set(sessionId, session);
        this.memory += session.bytes;
      },
      onsessionclosed: (sessionId) => this.forget(sessionId),
    });
    const now = Date.now();
    const session: Session = {
      transport,
      sdk,
      opened: now,
      bytes,
      lastSeen: now,
      inflight: 0,
      initialized: false,
      owner,
    };
    transport.onclose = () => {
      if (transport.sessionId) this.forget(transport.sessionId);
    };
    await sdk.connect(transport);
    trackInflight(session);
    return transport.handleRequest(request, options);
  }

  /** Tells every open session what changed. */
  notify(change: ListChange): void {
    for (const session of this.sessions.values()) sendChange(session.sdk, change);
  }

  /** Estimated memory the open sessions hold, in bytes. */
  get memoryBytes(): number {
    return this.memory;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions) {
      if (session.inflight > 0) continue;
      if (!session.initialized && session.opened < now - this.options.handshakeMs)
        this.evict(id, session, 'http.session_unfinished', 'closing a session whose handshake never finished');
      else if (session.lastSeen < now - this.options.idleMs)
        this.evict(id, session, 'http.session_expired', 'closing an idle session');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    this.memory = 0;
    await Promise.allSettled(open.map((s) => s.sdk.close()));
  }
}
