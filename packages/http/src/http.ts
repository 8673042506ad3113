import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_REQUEST_BODY_SIZE, createMcpHandler } from '@modelcontextprotocol/server';
import { CoreErrorCode, SluiceError, formatIssues } from '@sluice/core';
import type { AuthInfo, Logger } from '@sluice/core';
import { rpcErrorBody, toProtocolError } from '@sluice/core/internal';
import type { HttpHost, TransportHooks } from '@sluice/core/internal';
import { LegacySessions, rpcErrorResponse, sessionLimits } from './http-sessions.js';
import { ListenAudiences } from './listen-audiences.js';
import { ListenerAuthOptions } from './auth/options.js';
import { createAuthGate } from './auth/gate.js';
import type { AuthGate } from './auth/gate.js';
import { DEFAULT_GUESS_LIMITS, GuessThrottle } from './auth/guess-throttle.js';
import type { GuessLimits } from './auth/guess-throttle.js';
import { HttpLimits } from './http-limits.js';
import { guessableKeyWarning, guessableKeys, unguessableKeys } from './auth/api-keys.js';
import { PlainAnswer, isAnswer, nodeFront } from './node-front.js';
import { ConnectionShares, callerKey, shareLimits } from './http-shares.js';
import type { ShareUsage } from './http-shares.js';
import type { FrontRoute } from './node-front.js';

export interface ListenOptions {
  /** Default 0: any free port (read it from the listener). */
  port?: number;
  /** Default `127.0.0.1`: loopback only. */
  host?: string;
  /** Default `/mcp`. */
  path?: string;
  /**
   * Origins a browser request may come from. A bare hostname (`localhost`)
   * matches that host on this listener's own port; `host:port` or a full
   * origin (`https://app.example.com`) matches exactly. Default: the
   * loopback names on this listener's port. A request with another Origin
   * gets 403, which stops DNS rebinding.
   */
  allowedOrigins?: readonly string[];
  /**
   * Hostnames the `Host` header may name (any port). Default: the loopback
   * names when bound to a loopback address, and no check otherwise. A
   * request naming another host gets 403: a DNS-rebinding page sends its own
   * hostname, often with no Origin at all.
   */
  allowedHosts?: readonly string[];
  /** Largest request body accepted, in bytes. Default 4 MiB; larger gets 413. */
  maxBodyBytes?: number;
  /** A 2025-11-25 session unused this long is closed. Default 30 minutes. */
  sessionIdleMs?: number;
  /** A 2025-11-25 session whose client sent nothing after `initialize` is closed after this long. Default 30 s. */
  sessionHandshakeMs?: number;
  /** 2025-11-25 sessions open at once. Default 10,000. */
  maxSessions?: number;
  /** Memory all 2025-11-25 sessions may hold together, in bytes (estimated). Default 64 MiB. */
  maxSessionMemoryBytes?: number;
  /**
   * 2025-11-25 sessions one verified caller (an API key, a token's subject)
   * holds at once, and the same fraction of `maxSessionMemoryBytes`; past
   * either, the caller's own least recently used session is evicted (429
   * when each has a request running), never another caller's. Sessions
   * without a verified caller (`auth: none`) have no share. Default a
   * quarter of `maxSessions`.
   */
  maxSessionsPerCaller?: number;
  /** Largest `initialize` request that opens a session, in bytes; its params are kept for the session's life. Default 64 KiB. */
  maxInitializeBytes?: number;
  /** Time to receive a request's headers, in ms. Default 10 000. */
  headersTimeoutMs?: number;
  /** Time to receive a whole request (headers and body), in ms. Default 30 000. */
  requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this long, in ms. Default 5 000. */
  keepAliveTimeoutMs?: number;
  /** Connections open at once; more are closed as they arrive. Default 1 024. */
  maxConnections?: number;
  /**
   * Connections that have not yet had a request admitted (no credential
   * checked, or a wrong one); past it the oldest of them is closed, so that
   * they never take the room of callers with a key. Default a quarter of
   * `maxConnections`.
   */
  maxUnauthenticatedConnections?: number;
  /** Connections one verified caller (an API key, a token's subject) holds at once; past it 429. Default a quarter of `maxConnections`. */
  maxConnectionsPerCaller?: number;
  /** Held streams (2025-11-25 GET event streams, 2026-07-28 `subscriptions/listen`) open at once; past it 429. Default half of `maxConnections`. */
  maxHeldStreams?: number;
  /** Held streams one verified caller holds at once; past it 429. Default a sixteenth of `maxConnections`. */
  maxHeldStreamsPerCaller?: number;
  /** A held stream that carried nothing but keep-alives this long is closed; the client reconnects. Default 10 minutes. */
  heldStreamIdleMs?: number;
  /**
   * Further routes on the same server, by exact path (e.g. `/metrics`,
   * `/healthz`). They get the same Origin check as the MCP endpoint and,
   * when `auth` is set, the same authentication unless listed in `publicRoutes`;
   * an authenticated route's request carries the verified caller as `req.auth`
   * (see `RouteRequest`).
   */
  routes?: Readonly<Record<string, http.RequestListener>>;
  /** Routes served without authentication, such as a health check that reveals nothing. */
  publicRoutes?: readonly string[];
  /**
   * Who may call: OAuth 2.1 bearer tokens (this server is a resource
   * server), static API keys, or `none`. Default `none`, which is allowed
   * only on a loopback host unless `allowUnauthenticated` is set.
   */
  auth?: ListenerAuthOptions;
  /** Serve a non-loopback host without authentication anyway (warned at every start). */
  allowUnauthenticated?: boolean;
  /**
   * Refused credentials one source (an IPv4 /24, an IPv6 /64, all of
   * loopback) may cause per window, counting checks still running; past it
   * its credentials are refused unchecked with 429, except a configured API
   * key too random to guess (128 estimated bits or more) or a token as random
   * that this listener admitted before. A guessable key is refused with its
   * source, right or wrong, used before or not. Default 20 per minute.
   */
  guessLimits?: GuessLimits;
}

/** Credentials refused since the listener started: after a check, or unchecked by the guess throttle. */
export interface GuessUsage {
  readonly refused: number;
  readonly throttled: number;
}

/** Log lines about refused credentials per minute, over all sources; the rest are counted only. */
const MAX_GUESS_LOG_LINES = 60;

export interface HttpListener {
  /** The MCP endpoint, e.g. `http://127.0.0.1:43121/mcp`. */
  readonly url: URL;
  readonly port: number;
  readonly host: string;
  /** The underlying Node server, to attach further routes or inspect. */
  readonly server: http.Server;
  /**
   * Checks an `Authorization` header value exactly as the listener checks its
   * requests (the same keys or tokens, the same required scopes): the
   * verified caller, `undefined` when the listener has no authentication
   * (`auth: none`), or `false` when refused. For a public route that takes
   * credentials another way, such as a login form.
   */
  authenticate(authorization: string, address?: string): Promise<AuthInfo | undefined | false>;
  /** The connection and held-stream shares: their limits, what they hold now, and how often they refused. */
  shares(): ShareUsage;
  /**
   * Whether an `Authorization` value passes a source the guess throttle refuses: a configured API key of 128
   * estimated random bits or more, or a token as random that the listener admitted before (remembered by keyed
   * fingerprint, at most 1 024). Never a guessable key, used before or not. For a login form that keeps its own limit.
   */
  passesGuessThrottle(authorization: string): boolean;
  /** Credentials refused so far, checked or throttled. */
  guesses(): GuessUsage;
  close(): Promise<void>;
}

type OwnListenOptions = ListenOptions;
type OwnHttpListener = HttpListener;

// Every program that imports this package sees these as what `server.listen()` takes and returns.
declare module '@sluice/core' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: fills in core's empty interface
  interface ListenOptions extends OwnListenOptions {}
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: fills in core's empty interface
  interface HttpListener extends OwnHttpListener {}
}

/** How long a connection whose unread body passed its bound is kept half-closed, so its answer is read, before it is cut. */
const CUT_GRACE_MS = 1_000;

/** How long close() lets open responses finish before cutting connections. */
const CLOSE_GRACE_MS = 1_000;

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]', '::1'];

const isLoopbackBind = (host: string): boolean =>
  host === 'localhost' || host === '::1' || host === '[::1]' || host.startsWith('127.');

/**
 * The check for keys too random to guess, which pass a source the guess
 * throttle refuses; each weaker key is warned about at start, since guessers
 * at its caller's address keep it out for as long as they guess.
 */
function guessableKeysWarned(
  auth: { readonly keys: readonly { readonly name: string; readonly key: string }[] },
  logger: Logger,
): ((authorization: string) => boolean) | undefined {
  for (const { name, bits } of guessableKeys(auth.keys))
    logger.warn({ event: 'http.guessable_key', key: name, bits }, guessableKeyWarning(name, bits));
  return unguessableKeys(auth);
}

/** Parses the listener's auth options, refusing an open non-loopback bind. */
function listenerAuth(
  options: ListenOptions,
  bindHost: string,
  logger: Logger,
): ListenerAuthOptions & { type: string } {
  // Parsed once per listener: zod's compiled fast path for object schemas would cost more than it saves.
  const parsed = ListenerAuthOptions.safeParse(options.auth ?? { type: 'none' }, { jitless: true });
  if (!parsed.success)
    throw new SluiceError(
      CoreErrorCode.INVALID_OPTIONS,
      `Invalid listen auth options: ${formatIssues(parsed.error, { prefix: ['auth'] })}`,
    );
  if (parsed.data.type !== 'none' || isLoopbackBind(bindHost)) return parsed.data;
  if (!options.allowUnauthenticated)
    throw new SluiceError(
      CoreErrorCode.INSECURE_LISTEN,
      `Refusing to serve ${bindHost} without authentication: anyone who can reach it could call every tool. ` +
        'Configure auth (oauth or apiKeys), bind 127.0.0.1, or set allowUnauthenticated: true to accept the risk.',
    );
  logger.warn(
    { event: 'http.unauthenticated', host: bindHost },
    `serving ${bindHost} WITHOUT authentication: anyone who can reach it can call every tool`,
  );
  return parsed.data;
}

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

/**
 * Once a request is answered, the rest of a body nobody read (after a 401, a
 * 413 or any answer given before the body) is read and thrown away only up to
 * `bound` bytes, so that a client still sending sees the answer rather than a
 * reset; past it the connection is cut. Node would otherwise read it to its
 * end, and a chunked body need never end.
 */
function boundUnreadBody(req: http.IncomingMessage, res: http.ServerResponse, bound: number): void {
  // Before 'finish', where Node starts discarding the body unseen and unbounded.
  res.once('prefinish', () => {
    if (req.complete) return;
    let read = 0;
    const count = (chunk: Buffer) => {
      read += chunk.length;
      if (read <= bound) return;
      // Stop reading and close our side: the client, its writes stalled, still reads the answer before the close.
      // A reset now could destroy the answer unread in its buffer. Cut it for good a moment later.
      req.off('data', count);
      req.pause();
      req.socket.end();
      setTimeout(() => req.socket.destroy(), CUT_GRACE_MS).unref();
    };
    req.on('data', count);
  });
}

/** The answer past a share: 429, and the connection closed so that it counts no longer. */
function overShare(what: string): PlainAnswer {
  return new PlainAnswer(
    429,
    { 'content-type': 'application/json', 'retry-after': '1', connection: 'close' },
    rpcErrorBody(null, -32000, `Too many ${what}: retry later`),
  );
}

/** A request that holds its response open for events: a 2025-11-25 GET stream, a 2026-07-28 `subscriptions/listen`. */
const holdsStream = (method: string, body: unknown): boolean =>
  method === 'GET' ||
  (typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'subscriptions/listen');

/**
 * What is wrong with a `subscriptions/listen` filter too large to keep for
 * the stream's life, or undefined. Bounded per stream; a caller's held-stream
 * share bounds its total.
 */
function listenFilterProblem(body: unknown): string | undefined {
  const params = (body as { params?: { notifications?: { resourceSubscriptions?: unknown } } }).params;
  const uris = params?.notifications?.resourceSubscriptions;
  if (!Array.isArray(uris)) return undefined;
  if (uris.length > HttpLimits.MAX_LISTEN_RESOURCES)
    return `resourceSubscriptions lists ${uris.length} URIs; the limit is ${HttpLimits.MAX_LISTEN_RESOURCES}`;
  if (uris.some((uri) => typeof uri === 'string' && uri.length > HttpLimits.MAX_LISTEN_URI_CHARS))
    return `a URI in resourceSubscriptions is longer than ${HttpLimits.MAX_LISTEN_URI_CHARS} characters`;
  return undefined;
}

/**
 * A 2026-07-28 listen filter's resource URIs meet what a 2025-11-25
 * `resources/subscribe` meets (deny globs, authz, guards): the body with
 * them in canonical spelling, or the JSON-RPC error the client gets.
 */
async function admitListen(
  host: HttpHost,
  body: unknown,
  authInfo: AuthInfo | undefined,
  request: Request,
): Promise<unknown> {
  const listen = body as { id?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } };
  const uris = listen.params?.notifications?.resourceSubscriptions;
  if (host.admitListen === undefined || !Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) return body;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, key) => (headers[key] = value));
  try {
    const admitted = await host.admitListen(uris, { authInfo, headers, signal: request.signal });
    const notifications = { ...listen.params?.notifications, resourceSubscriptions: admitted };
    return { ...listen, params: { ...listen.params, notifications } };
  } catch (error) {
    const id = typeof listen.id === 'string' || typeof listen.id === 'number' ? listen.id : null;
    // toProtocolError answers a JSON-RPC error: its code, a message meant for the client, and its data.
    const { code, message, data } = toProtocolError(error);
    const rpc = { code, message, ...(data === undefined ? {} : { data }) };
    return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: rpc }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  }
}

/**
 * What makes a request's target ambiguous, or undefined: more than one Host
 * header (RFC 9112 asks for 400), or an absolute-form target naming another
 * host than the Host header, which the Host check reads.
 */
function targetProblem(req: http.IncomingMessage): string | undefined {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]?.toLowerCase() === 'host') hosts++;
  if (hosts > 1) return 'Bad request: more than one Host header';
  const target = req.url ?? '/';
  if (target.startsWith('/')) return undefined;
  let authority: string;
  try {
    authority = new URL(target).host;
  } catch {
    return 'Bad request: the request target is neither a path nor an absolute URL';
  }
  if (authority.toLowerCase() !== (req.headers.host ?? '').toLowerCase())
    return 'Bad request: the request target names another host than the Host header';
  return undefined;
}

/** An extra route's request: `auth` is the verified caller (absent with `auth: none` or on a public route). */
export type RouteRequest = http.IncomingMessage & { auth?: AuthInfo };

/** Runs an extra route once its request passes the listener's authentication. */
async function authenticateRoute(
  gate: AuthGate | undefined,
  shares: ConnectionShares,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  route: http.RequestListener,
): Promise<void> {
  if (!gate) {
    jsonError(res, 503, 'Starting: retry shortly');
    return;
  }
  const verdict = await gate
    .authenticate(req.headers.authorization ?? null, req.socket.remoteAddress)
    .catch(() => new PlainAnswer(500, {}, ''));
  if (!isAnswer(verdict) && !shares.admit(req.socket, callerKey(verdict))) {
    overShare('connections for this caller').writeTo(res);
    return;
  }
  if (!isAnswer(verdict)) {
    // Where Node servers conventionally put the verified caller: a route reads it with `identityOf(req.auth)`.
    if (verdict) (req as RouteRequest).auth = verdict;
    route(req, res);
    return;
  }
  if (verdict instanceof PlainAnswer) {
    verdict.writeTo(res);
    return;
  }
  res.writeHead(verdict.status, Object.fromEntries(verdict.headers));
  res.end(await verdict.text());
}

/** RFC 9728 metadata: public by design, so any origin may read it. */
function serveMetadata(req: http.IncomingMessage, res: http.ServerResponse, metadata: object): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' });
    return void res.end();
  }
  res.writeHead(200, {
    'content-type': 'application/json',
    'access-control-allow-origin': '*',
    'cache-control': 'max-age=300',
  });
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(metadata));
}

/** The hostname of a Host header (`name:port`, `[v6]:port`), lower-cased; undefined when malformed. */
function hostnameOf(host: string | undefined): string | undefined {
  if (host === undefined || host === '') return undefined;
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function hostAllowed(host: string | undefined, allowed: ReadonlySet<string> | undefined): boolean {
  if (allowed === undefined) return true;
  const name = hostnameOf(host);
  return name !== undefined && allowed.has(name);
}

/**
 * Origins as compared: `scheme://host:port` for full origins, `host:port`
 * otherwise (a bare hostname gets the listener's port).
 */
function originRules(entries: readonly string[], port: number): { exact: Set<string>; hostPort: Set<string> } {
  const exact = new Set<string>();
  const hostPort = new Set<string>();
  for (const entry of entries) {
    if (entry.includes('://')) {
      try {
        exact.add(new URL(entry).origin);
      } catch {
        // Validated where configured; a malformed entry matches nothing.
      }
      continue;
    }
    const name = hostnameOf(entry);
    if (name === undefined) continue;
    const explicit = /:(\d+)$/.exec(entry.replace(/^\[[^\]]*\]/, ''));
    hostPort.add(`${name}:${explicit ? explicit[1] : port}`);
  }
  return { exact, hostPort };
}

function originAllowed(origin: string | undefined, rules: ReturnType<typeof originRules>): boolean {
  if (origin === undefined) return true; // not a browser: the Host check still applies
  try {
    const url = new URL(origin);
    if (rules.exact.has(url.origin)) return true;
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return rules.hostPort.has(`${url.hostname.toLowerCase()}:${port}`);
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
  const allowedHostList = options.allowedHosts ?? (isLoopbackBind(bindHost) ? LOOPBACK : undefined);
  const allowedHosts = allowedHostList && new Set(allowedHostList.map((h) => hostnameOf(h) ?? h.toLowerCase()));
  // Filled in once the port is known (port 0 picks one).
  let origins = originRules([], 0);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_SIZE;
  const auth = listenerAuth(options, bindHost, host.logger);
  // eslint-disable-next-line prefer-const -- assigned once the port is known, after the routes that read it are built
  let gate: AuthGate | undefined;
  const onerror = (error: Error) => host.logger.debug({ event: 'http.error', err: error }, 'MCP HTTP handler error');
  const audiences = new ListenAudiences(onerror);
  const modern = createMcpHandler(() => host.createSdkServer('http'), {
    legacy: 'reject',
    onerror,
    maxRequestBodySize: maxBody,
    bus: audiences,
  });
  const sessions = new LegacySessions(host, {
    idleMs: options.sessionIdleMs ?? HttpLimits.SESSION_IDLE_MS,
    handshakeMs: options.sessionHandshakeMs ?? HttpLimits.SESSION_HANDSHAKE_MS,
    ...sessionLimits(options),
    maxInitializeBytes: options.maxInitializeBytes ?? HttpLimits.MAX_INITIALIZE_BYTES,
    maxBodyBytes: maxBody,
  });
  const maxConnections = options.maxConnections ?? HttpLimits.MAX_CONNECTIONS;
  const shares = new ConnectionShares(shareLimits({ ...options, maxConnections }));
  const route: FrontRoute = async (front) => {
    if (!gate) return rpcErrorResponse(503, -32000, 'Starting: retry shortly');
    // The credential is checked from its header: a refused request never builds the web-standard request.
    const authInfo = await gate.authenticate(front.authorization, front.socket.remoteAddress);
    if (isAnswer(authInfo)) return authInfo;
    const caller = callerKey(authInfo);
    if (!shares.admit(front.socket, caller)) return overShare('connections for this caller');
    const request = front.web();
    let body: unknown;
    let bodyBytes = 0;
    if (front.method === 'POST') {
      const read = await front.readBody();
      if (read.tooLarge) return rpcErrorResponse(413, -32000, `Request body too large: the limit is ${maxBody} bytes`);
      bodyBytes = read.text.length;
      try {
        body = JSON.parse(read.text);
      } catch {
        return rpcErrorResponse(400, -32700, 'Parse error: the body is not JSON');
      }
    }
    // A session's transport learns of a client going away from its stream being cancelled; the stateless
    // handler closes the request's server when the request's signal aborts, so only it gets one.
    if (holdsStream(front.method, body)) {
      const problem = front.method === 'POST' ? listenFilterProblem(body) : undefined;
      if (problem !== undefined) {
        const id = (body as { id?: unknown }).id;
        return new Response(
          rpcErrorBody(
            typeof id === 'string' || typeof id === 'number' ? id : null,
            -32602,
            `Invalid params: ${problem}`,
          ),
          { status: 400, headers: { 'content-type': 'application/json' } },
        );
      }
      const admitted = front.method === 'POST' ? await admitListen(host, body, authInfo, request) : body;
      if (admitted instanceof Response) return admitted;
      body = admitted;
      const release = shares.hold(caller, {
        get lastEventAt() {
          return front.lastEventAt;
        },
        close: () => front.cut(),
      });
      if (!release) return overShare('held streams');
      front.onDone(release);
    }
    if (sessions.owns(request, body)) return sessions.handle(request, body, bodyBytes, authInfo);
    const serve = () =>
      modern.fetch(front.web({ signal: true }), {
        ...(body === undefined ? {} : { parsedBody: body }),
        ...(authInfo ? { authInfo } : {}),
      });
    // A listen stream the request opens is its caller's: list changes reach it as that caller may see them. Only
    // such a request opens one, so no other request pays for naming its caller to the event bus.
    return holdsStream(request.method, body) ? audiences.as(authInfo, serve) : serve();
  };
  const nodeHandler = nodeFront(route, { onerror, maxBodyBytes: maxBody });

  const headersTimeout = options.headersTimeoutMs ?? HttpLimits.HEADERS_TIMEOUT_MS;
  const server = http.createServer(
    {
      headersTimeout,
      requestTimeout: Math.max(options.requestTimeoutMs ?? HttpLimits.REQUEST_TIMEOUT_MS, headersTimeout),
      keepAliveTimeout: options.keepAliveTimeoutMs ?? HttpLimits.KEEP_ALIVE_TIMEOUT_MS,
      // How often Node checks the two timeouts above: often enough that they hold.
      connectionsCheckingInterval: Math.min(1_000, Math.max(100, Math.floor(headersTimeout / 4))),
    },
    (req, res) => {
      shares.requested(req.socket, res);
      boundUnreadBody(req, res, maxBody);
      const ambiguous = targetProblem(req);
      if (ambiguous !== undefined) {
        jsonError(res, 400, ambiguous);
        return;
      }
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (!hostAllowed(req.headers.host, allowedHosts)) {
        jsonError(res, 403, 'Forbidden: Host not allowed');
        return;
      }
      if (!originAllowed(req.headers.origin, origins)) {
        jsonError(res, 403, 'Forbidden: Origin not allowed');
        return;
      }
      if (gate?.metadata && gate.metadataPaths.includes(url.pathname)) {
        serveMetadata(req, res, gate.metadata);
        return;
      }
      const extra = url.pathname === path ? undefined : options.routes?.[url.pathname];
      if (extra) {
        if (options.publicRoutes?.includes(url.pathname)) {
          extra(req, res);
          return;
        }
        return void authenticateRoute(gate, shares, req, res, extra);
      }
      if (url.pathname !== path) {
        jsonError(res, 404, `Not found: the MCP endpoint is ${path}`);
        return;
      }
      if (Number(req.headers['content-length'] ?? 0) > maxBody) {
        refuseTooLarge(req, res, maxBody);
        return;
      }
      nodeHandler(req, res).catch((error: unknown) => {
        host.logger.error({ event: 'http.failed', err: error }, 'HTTP request failed');
        jsonError(res, 500, 'Internal error');
      });
    },
  );
  // Not server.maxConnections: past it Node drops the newcomer, which lets silent sockets keep everyone out.
  // The shares close the least useful unauthenticated socket instead.
  server.on('connection', (socket: import('node:net').Socket) => shares.connected(socket));
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, bindHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  origins = originRules(options.allowedOrigins ?? LOOPBACK, address.port);
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const endpoint = new URL(`http://${urlHost}:${address.port}${path}`);
  const guessUsage = { refused: 0, throttled: 0 };
  const guessLog = { until: 0, lines: 0, unlogged: 0 };
  const throttledSources = new Map<string, number>();
  gate = createAuthGate(auth as Parameters<typeof createAuthGate>[0], endpoint, {
    throttle: new GuessThrottle(
      options.guessLimits ?? DEFAULT_GUESS_LIMITS,
      Date.now,
      auth.type === 'apiKeys' ? guessableKeysWarned(auth, host.logger) : undefined,
    ),
    report: (outcome, source) => {
      guessUsage[outcome]++;
      const now = Date.now();
      if (now >= guessLog.until) Object.assign(guessLog, { until: now + 60_000, lines: 0 });
      // A throttled source is logged once a minute; every refusal after a check is, up to the budget.
      if (outcome === 'throttled' && (throttledSources.get(source) ?? 0) > now) return;
      if (guessLog.lines >= MAX_GUESS_LOG_LINES) {
        guessLog.unlogged++;
        return;
      }
      guessLog.lines++;
      if (outcome === 'throttled') {
        if (throttledSources.size >= 1_024) throttledSources.clear();
        throttledSources.set(source, now + 60_000);
      }
      const unlogged = guessLog.unlogged;
      guessLog.unlogged = 0;
      host.logger.warn(
        { event: outcome === 'refused' ? 'http.auth_failed' : 'http.auth_throttled', source, unlogged },
        outcome === 'refused' ? 'a credential was refused' : 'credentials from this source are refused for a while',
      );
    },
  });
  host.logger.info({ event: 'http.listening', url: endpoint.href, auth: gate.type }, `listening on ${endpoint.href}`);

  const detachNotify = hooks.onListChanged((change) => {
    audiences.notify(change);
    sessions.notify(change);
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      detachNotify();
      detachClose();
      shares.close();
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
  const ready = gate;
  const authenticate = async (authorization: string, address?: string): Promise<AuthInfo | undefined | false> => {
    let probe: Request;
    try {
      probe = new Request('http://route.invalid/', { headers: { authorization } });
    } catch {
      return false; // not a value a header can carry
    }
    const verdict = await ready.authenticate(probe.headers.get('authorization'), address).catch(() => false as const);
    return isAnswer(verdict) ? false : verdict;
  };
  return {
    url: endpoint,
    port: address.port,
    host: bindHost,
    server,
    authenticate,
    shares: () => shares.usage(),
    guesses: () => ({ ...guessUsage }),
    passesGuessThrottle: (authorization) => ready.passesGuessThrottle(authorization),
    close,
  };
}
