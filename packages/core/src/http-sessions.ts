import { randomUUID } from 'node:crypto';
import {
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
} from '@modelcontextprotocol/server';
import type { Server as SdkServer } from '@modelcontextprotocol/server';
import type { Logger } from './logger.js';
import type { ListChange } from './transport-hooks.js';
import { sendChange } from './transport-hooks.js';

interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly sdk: SdkServer;
  lastSeen: number;
  /** Requests from the client not answered yet: a session with any is not idle. */
  inflight: number;
}

export interface SessionHost {
  readonly logger: Logger;
  createSdkServer(transport: 'http'): SdkServer;
}

export interface SessionOptions {
  /** A session unused this long is closed. */
  readonly idleMs: number;
  /** Sessions open at once; an initialize beyond it gets 503. */
  readonly maxSessions: number;
  readonly maxBodyBytes: number;
}

/** A JSON-RPC error in an HTTP response, for requests no transport will take. */
export function rpcErrorResponse(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * A 2025-11-25 `initialize` opens a session. Anything else named
 * `initialize` (malformed, or from a 2026-07-28 client, for which the method
 * no longer exists) goes to the stateless handler, which answers it under
 * its id.
 */
function opensSession(request: Request, body: unknown): boolean {
  return request.method === 'POST' && isInitializeRequest(body) && !hasModernEnvelope(request, body);
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
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly host: SessionHost,
    private readonly options: SessionOptions,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(options.idleMs, 60_000));
    this.sweeper.unref();
  }

  /** Whether a request belongs here: it names a session, or opens one. */
  owns(request: Request, body: unknown): boolean {
    return request.headers.has('mcp-session-id') || opensSession(request, body);
  }

  async handle(request: Request, body: unknown): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const session = this.sessions.get(id);
      if (!session) return rpcErrorResponse(404, -32001, 'Session not found: initialize a new session');
      session.lastSeen = Date.now();
      return session.transport.handleRequest(request, { parsedBody: body });
    }
    if (this.sessions.size >= this.options.maxSessions)
      return rpcErrorResponse(503, -32000, 'Too many sessions: retry later');
    return this.open(request, body);
  }

  private async open(request: Request, body: unknown): Promise<Response> {
    const sdk = this.host.createSdkServer('http');
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessioninitialized: (sessionId) => {
        this.sessions.set(sessionId, session);
      },
      onsessionclosed: (sessionId) => {
        this.sessions.delete(sessionId);
      },
    });
    const session: Session = { transport, sdk, lastSeen: Date.now(), inflight: 0 };
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await sdk.connect(transport);
    trackInflight(session);
    return transport.handleRequest(request, { parsedBody: body });
  }

  /** Tells every open session what changed. */
  notify(change: ListChange): void {
    for (const session of this.sessions.values()) sendChange(session.sdk, change);
  }

  private sweep(): void {
    const cutoff = Date.now() - this.options.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen >= cutoff || session.inflight > 0) continue;
      this.sessions.delete(id);
      this.host.logger.debug({ event: 'http.session_expired', session: id }, 'closing an idle session');
      void session.sdk.close().catch(() => {});
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(open.map((s) => s.sdk.close()));
  }
}
