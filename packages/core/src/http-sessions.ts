import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { Server as SdkServer } from '@modelcontextprotocol/server';
import type { Logger } from './logger.js';

interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly sdk: SdkServer;
  lastSeen: number;
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

function isInitialize(body: unknown): boolean {
  const first = Array.isArray(body) ? body[0] : body;
  return typeof first === 'object' && first !== null && (first as { method?: unknown }).method === 'initialize';
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
    return request.headers.has('mcp-session-id') || (request.method === 'POST' && isInitialize(body));
  }

  async handle(request: Request, body: unknown): Promise<Response> {
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const session = this.sessions.get(id);
      if (!session) return rpcErrorResponse(404, -32001, 'Session not found: initialize a new session');
      session.lastSeen = Date.now();
      return session.transport.handleRequest(request, { parsedBody: body });
    }
    if (this.sessions.size >= this.options.maxSessions) return rpcErrorResponse(503, -32000, 'Too many sessions: retry later');
    return this.open(request, body);
  }

  private async open(request: Request, body: unknown): Promise<Response> {
    const sdk = this.host.createSdkServer('http');
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessioninitialized: (sessionId) => {
        this.sessions.set(sessionId, { transport, sdk, lastSeen: Date.now() });
      },
      onsessionclosed: (sessionId) => {
        this.sessions.delete(sessionId);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await sdk.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  /** Tells every open session that the tool list changed. */
  notifyToolsChanged(): void {
    for (const session of this.sessions.values()) void session.sdk.sendToolListChanged().catch(() => {});
  }

  get size(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const cutoff = Date.now() - this.options.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen >= cutoff) continue;
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
