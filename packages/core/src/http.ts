import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_REQUEST_BODY_SIZE, createMcpHandler, readRequestBody } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { Server as SdkServer } from '@modelcontextprotocol/server';
import type { TransportHooks } from './transport-hooks.js';
import type { Logger } from './logger.js';
import { LegacySessions, rpcErrorResponse } from './http-sessions.js';
import { rpcErrorBody } from './rpc-error-body.js';

export interface ListenOptions {
  /** Default 0: any free port (read it from the listener). */
  port?: number;
  /** Default `127.0.0.1`: loopback only. */
  host?: string;
  /** Default `/mcp`. */
  path?: string;
  /**
   * Hostnames a browser `Origin` may carry. Default: the loopback names. A
   * request with another Origin gets 403, which stops DNS rebinding.
   */
  allowedOrigins?: readonly string[];
  /** Largest request body accepted, in bytes. Default 4 MiB; larger gets 413. */
  maxBodyBytes?: number;
  /** A 2025-11-25 session unused this long is closed. Default 30 minutes. */
  sessionIdleMs?: number;
  /** 2025-11-25 sessions open at once. Default 10,000. */
  maxSessions?: number;
  /**
   * Further routes on the same server, by exact path (e.g. `/metrics`,
   * `/healthz`). They get the same Origin check as the MCP endpoint.
   */
  routes?: Readonly<Record<string, http.RequestListener>>;
}

export interface HttpListener {
  /** The MCP endpoint, e.g. `http://127.0.0.1:43121/mcp`. */
  readonly url: URL;
  readonly port: number;
  readonly host: string;
  /** The underlying Node server, to attach further routes or inspect. */
  readonly server: http.Server;
  close(): Promise<void>;
}

interface HttpHost {
  readonly logger: Logger;
  createSdkServer(transport: 'http'): SdkServer;
}

/** How long close() lets open responses finish before cutting connections. */
const CLOSE_GRACE_MS = 1_000;

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]', '::1'];

function jsonError(res: http.ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(rpcErrorBody(null, -32000, message));
}

/** How much of an oversized body is read and thrown away so that the client receives its 413 rather than a reset. */
const DRAIN_FACTOR = 4;

/**
 * Answers a body declared larger than the limit with 413. The rest of the
 * body is read first (up to a bound): answering while the client still
 * sends makes it see a reset connection instead of the answer.
 */
function refuseTooLarge(req: http.IncomingMessage, res: http.ServerResponse, maxBody: number): void {
  const answer = () => {
    res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
    res.end(rpcErrorBody(null, -32000, `Request body too large: the limit is ${maxBody} bytes`));
  };
  let read = 0;
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > maxBody * DRAIN_FACTOR) {
      answer();
      req.destroy();
    }
  });
  req.on('end', () => {
    if (!res.headersSent) answer();
  });
  req.on('error', () => res.destroy());
}

function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true; // not a browser: nothing to rebind
  try {
    return allowed.includes(new URL(origin).hostname);
  } catch {
    return false;
  }
}

/**
 * Streamable HTTP for both protocol versions: 2026-07-28 requests are
 * stateless, one SDK server per request; 2025-11-25 clients get a session,
 * so that server-to-client requests (elicitation) can reach them.
 */
export async function listenHttp(host: HttpHost, options: ListenOptions, hooks: TransportHooks): Promise<HttpListener> {
  const path = options.path ?? '/mcp';
  const bindHost = options.host ?? '127.0.0.1';
  const allowed = options.allowedOrigins ?? LOOPBACK;
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_SIZE;
  const onerror = (error: Error) => host.logger.debug({ event: 'http.error', err: error }, 'MCP HTTP handler error');
  const modern = createMcpHandler(() => host.createSdkServer('http'), {
    legacy: 'reject',
    onerror,
    maxRequestBodySize: maxBody,
  });
  const sessions = new LegacySessions(host, {
    idleMs: options.sessionIdleMs ?? 30 * 60_000,
    maxSessions: options.maxSessions ?? 10_000,
    maxBodyBytes: maxBody,
  });
  const route = async (request: Request): Promise<Response> => {
    let body: unknown;
    if (request.method === 'POST') {
      const read = await readRequestBody(request, maxBody);
      if (read.tooLarge) return rpcErrorResponse(413, -32000, `Request body too large: the limit is ${maxBody} bytes`);
      try {
        body = JSON.parse(read.text);
      } catch {
        return rpcErrorResponse(400, -32700, 'Parse error: the body is not JSON');
      }
    }
    if (sessions.owns(request, body)) return sessions.handle(request, body);
    return modern.fetch(request, body === undefined ? {} : { parsedBody: body });
  };
  const nodeHandler = toNodeHandler({ fetch: route }, { onerror, maxRequestBodySize: maxBody });

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!originAllowed(req.headers.origin, allowed)) return jsonError(res, 403, 'Forbidden: Origin not allowed');
    const extra = url.pathname === path ? undefined : options.routes?.[url.pathname];
    if (extra) return void extra(req, res);
    if (url.pathname !== path) return jsonError(res, 404, `Not found: the MCP endpoint is ${path}`);
    if (Number(req.headers['content-length'] ?? 0) > maxBody) return refuseTooLarge(req, res, maxBody);
    nodeHandler(req, res).catch((error: unknown) => {
      host.logger.error({ event: 'http.failed', err: error }, 'HTTP request failed');
      jsonError(res, 500, 'Internal error');
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, bindHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const endpoint = new URL(`http://${urlHost}:${address.port}${path}`);
  host.logger.info({ event: 'http.listening', url: endpoint.href }, `listening on ${endpoint.href}`);

  const detachNotify = hooks.onListChanged((change) => {
    if (change === 'tools') modern.notify.toolsChanged();
    else if (change === 'prompts') modern.notify.promptsChanged();
    else if (change === 'resources') modern.notify.resourcesChanged();
    else modern.notify.resourceUpdated(change.resourceUpdated);
    sessions.notify(change);
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      detachNotify();
      detachClose();
      // Stop accepting; let responses already being written finish (calls were
      // drained before this runs), then cut what is left, such as open SSE streams.
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([stopped, new Promise<void>((resolve) => (grace = setTimeout(resolve, CLOSE_GRACE_MS)))]);
      clearTimeout(grace);
      await Promise.allSettled([modern.close(), sessions.close()]);
      server.closeAllConnections();
      await stopped;
    })();
    return closing;
  };
  const detachClose = hooks.onClose(close);
  return { url: endpoint, port: address.port, host: bindHost, server, close };
}
