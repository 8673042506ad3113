import { Buffer } from 'node:buffer';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
  isInitializeRequest,
} from '@modelcontextprotocol/server';
import type { JSONRPCMessage, Server as SdkServer } from '@modelcontextprotocol/server';
import { identityOf } from '@sluice/core';
import type { AuthInfo, Logger, Store } from '@sluice/core';
import { meterSubscriptions, namesMethod, rpcErrorBody, sendChange, subscriptionBytes } from '@sluice/core/internal';
import type { ListChange } from '@sluice/core/internal';
import {
  MAX_ROUTED_MESSAGES,
  RouteBudget,
  SessionFleet,
  holdsStream,
  isSessionId,
  isShared,
  replay,
  subscriptionChange,
  subscriptionFits,
  withSubscription,
} from './http-session-fleet.js';
import type { FleetMessage, SessionRecord, SubscriptionChange } from './http-session-fleet.js';
import { callerKey } from './http-shares.js';
import { HttpLimits } from './http-limits.js';

interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly sdk: SdkServer;
  readonly opened: number;
  /**
   * What the session is charged against the memory budget: its `initialize`
   * request, a fixed overhead, and its resource subscriptions as they come and go.
   */
  bytes: number;
  /** Whether `bytes` is counted in the budget now: from `add` to `forget`. */
  counted: boolean;
  lastSeen: number;
  /** Requests from the client not answered yet: a session with any is not idle. */
  inflight: number;
  /** Who opened the session; only they may use it. */
  readonly owner: string | undefined;
  /** Whose share of the sessions it takes (as the connection shares name callers); undefined without a verified caller. */
  readonly caller: string | undefined;
  /** Whether the client sent anything after `initialize`: until then the handshake is unfinished. */
  initialized: boolean;
  /** Ids of the client's requests not answered yet. */
  readonly running: Set<RequestId>;
  /**
   * This server's requests to the client (elicitation, sampling, roots) not
   * answered yet: the id the client sees, and the copy's own. In a fleet the
   * client sees an id of this copy's own making: every copy of a session
   * numbers its requests from 0, and an answer to one copy's request must
   * never be taken for another's.
   */
  readonly asked: Map<RequestId, RequestId>;
  /** In a fleet: what the store holds for the session, and when this replica last wrote it. */
  record?: SessionRecord;
  written: number;
  /** The transport's own `send`, before the session's bookkeeping (a message pushed here by another replica). */
  sendRaw?: WebStandardStreamableHTTPServerTransport['send'];
  /**
   * Who made the last request here: the caller a list change is decided for, and in a fleet, for replaying what
   * a client set up through another replica.
   */
  authInfo: AuthInfo | undefined;
  /** In a fleet: subscription changes asked here and not answered yet, by request id. */
  readonly changing: Map<RequestId, SubscriptionChange>;
  /** In a fleet: replays of changes made through other replicas, one after another, in the order heard. */
  replaying: Promise<void>;
  /** In a fleet: when this replica last told the store's index the session was used. */
  touched: { readonly at: number; readonly ready: boolean };
  /** The session ended elsewhere while this copy ran a request: it takes no more, and goes once they are answered. */
  ending: boolean;
  /** Closes this copy once an ending session's last request is answered. */
  ended?: () => void;
}

type RequestId = string | number;

/** Server-to-client requests remembered per session; the oldest is forgotten beyond it (its answer is then dropped). */
const MAX_ASKED = 256;

/** A session in use is touched in the fleet's index at most this often per replica (its LRU order). */
const TOUCH_EVERY_MS = 1_000;

/** Changes to one session kept while its copy is being built (a client sets up a few subscriptions at a time). */
const MAX_HEARD_WHILE_RESTORING = 64;

/** What one session costs beyond its `initialize` request: SDK server, transport, maps (measured, rounded up). */
const SESSION_OVERHEAD_BYTES = 16 * 1024;

export interface SessionHost {
  readonly logger: Logger;
  createSdkServer(transport: 'http'): SdkServer;
  /** A store with a message bus (`@sluice/store-redis`) keeps sessions fleet-wide; the in-memory one keeps them here. */
  readonly services?: { readonly store: Store };
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
  /** Sessions one verified caller holds at once; beyond it the caller's own least recently used is evicted, or 429. */
  readonly maxSessionsPerCaller: number;
  /** Estimated memory of one verified caller's sessions; the same eviction applies (its only session always fits). */
  readonly maxMemoryBytesPerCaller: number;
  /** Largest `initialize` request that opens a session; a larger one gets 413. */
  readonly maxInitializeBytes: number;
  readonly maxBodyBytes: number;
}

/**
 * The session bounds as configured or defaulted, with each verified caller's
 * share: a quarter of the count unless given, and the same fraction of the memory.
 */
export function sessionLimits(options: {
  readonly maxSessions?: number | undefined;
  readonly maxSessionMemoryBytes?: number | undefined;
  readonly maxSessionsPerCaller?: number | undefined;
}): Pick<SessionOptions, 'maxSessions' | 'maxMemoryBytes' | 'maxSessionsPerCaller' | 'maxMemoryBytesPerCaller'> {
  const maxSessions = options.maxSessions ?? HttpLimits.MAX_SESSIONS;
  const maxMemoryBytes = options.maxSessionMemoryBytes ?? HttpLimits.MAX_SESSION_MEMORY_BYTES;
  const maxSessionsPerCaller = options.maxSessionsPerCaller ?? Math.max(1, Math.floor(maxSessions / 4));
  const maxMemoryBytesPerCaller = Math.floor(maxMemoryBytes * Math.min(1, maxSessionsPerCaller / maxSessions));
  return { maxSessions, maxMemoryBytes, maxSessionsPerCaller, maxMemoryBytesPerCaller };
}

/** The answer to an `initialize` past its caller's share, every session of the caller busy: 429. */
function callerOverShare(): Response {
  return new Response(
    rpcErrorBody(
      null,
      -32000,
      'Too many sessions for this caller, each with a request running: end one (DELETE) or retry later',
    ),
    { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' } },
  );
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
function trackInflight(
  session: Session,
  push?: (message: JSONRPCMessage) => void,
  answered?: (id: RequestId) => void,
): void {
  const { transport } = session;
  // In a fleet, this copy's requests to the client carry ids no other copy makes.
  const tag = push === undefined ? undefined : `sluice-${randomBytes(6).toString('base64url')}-`;
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && 'id' in message) {
      session.inflight++;
      session.running.add(message.id);
    } else if ('id' in message && message.id !== undefined) {
      // An answer to this copy's request: the SDK server hears it under the id it gave.
      const own = session.asked.get(message.id);
      session.asked.delete(message.id);
      if (own !== undefined && own !== message.id) message = { ...message, id: own };
    }
    if (!('method' in message) || message.method !== 'initialize') session.initialized = true;
    session.lastSeen = Date.now();
    receive?.(message, extra);
  };
  const send = transport.send.bind(transport);
  session.sendRaw = send;
  transport.send = (message, options) => {
    if (!('method' in message) && 'id' in message) {
      session.inflight = Math.max(0, session.inflight - 1);
      if (message.id !== undefined) session.running.delete(message.id);
      session.lastSeen = Date.now();
      if ('result' in message) answered?.(message.id);
      // The last answer of a session that ended elsewhere: the copy goes once it is written.
      if (session.ending && session.inflight === 0) {
        const sent = send(message, options);
        void sent.finally(() => session.ended?.()).catch(() => {});
        return sent;
      }
    } else if ('method' in message && 'id' in message) {
      const wire = tag === undefined ? message.id : `${tag}${String(message.id)}`;
      session.asked.set(wire, message.id);
      if (session.asked.size > MAX_ASKED) session.asked.delete(session.asked.keys().next().value as RequestId);
      if (wire !== message.id) message = { ...message, id: wire };
    } else {
      // This copy gave up a request of its own: the client knows it by the id it was sent under.
      const own = cancelledId(message);
      const wire = own === undefined ? undefined : wireIdOf(session, own);
      if (wire !== undefined) {
        session.asked.delete(wire);
        if (wire !== own)
          message = {
            ...message,
            params: { ...(message as { params?: object }).params, requestId: wire },
          };
      }
    }
    // A message for the GET stream that another replica holds goes there (a notification, or a request such as an
    // elicitation, whose answer then comes back by `route`); list changes every replica sends itself.
    if (
      push !== undefined &&
      'method' in message &&
      options?.relatedRequestId === undefined &&
      !message.method.endsWith('/list_changed') &&
      !holdsStream(transport)
    ) {
      push(message);
      return Promise.resolve();
    }
    return send(message, options);
  };
}

function newSession(
  transport: WebStandardStreamableHTTPServerTransport,
  sdk: SdkServer,
  bytes: number,
  owner: string | undefined,
  caller: string | undefined,
): Session {
  const now = Date.now();
  return {
    transport,
    sdk,
    opened: now,
    bytes,
    counted: false,
    lastSeen: now,
    inflight: 0,
    initialized: false,
    owner,
    caller,
    running: new Set(),
    asked: new Map(),
    written: 0,
    changing: new Map(),
    replaying: Promise.resolve(),
    authInfo: undefined,
    touched: { at: now, ready: false },
    ending: false,
  };
}

/** A subscription request as a copy replays it. */
function subscribeRequest(uri: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id: `sluice-replay-${randomUUID()}`, method: 'resources/subscribe', params: { uri } };
}

/** The id a client's cancellation names, if the message is one. */
function cancelledId(message: JSONRPCMessage): RequestId | undefined {
  if (!('method' in message) || message.method !== 'notifications/cancelled') return undefined;
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The id the client knows one of this copy's requests by. */
function wireIdOf(session: Session, own: RequestId): RequestId | undefined {
  for (const [wire, id] of session.asked) if (id === own) return wire;
  return undefined;
}

/** Whether this copy of a session is the one a message from the client is for: it asked, or runs what is cancelled. */
function awaits(session: Session, message: JSONRPCMessage): boolean {
  if (!('method' in message)) return 'id' in message && message.id !== undefined && session.asked.has(message.id);
  const cancelled = cancelledId(message);
  return cancelled === undefined || session.running.has(cancelled);
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
  /** What each verified caller's sessions here take of its share. */
  private readonly callers = new Map<string, { count: number; bytes: number }>();
  /** With a shared store: the sessions' records and messages. Without, sessions live in this process only. */
  private readonly fleet: SessionFleet | undefined;
  /** Copies of sessions being brought up from the store, so that two requests at once build one. */
  private readonly restoring = new Map<string, Promise<Session | undefined>>();
  /** Changes to sessions heard while their copies were being built here, applied once they are. */
  private readonly heardWhileRestoring = new Map<string, FleetMessage[]>();
  /** Each caller's share of the answers this replica sends other replicas. */
  private readonly routed = new RouteBudget();
  /** The session bounds as the fleet's index applies them. */
  private readonly indexLimits: SessionOptions;

  constructor(
    private readonly host: SessionHost,
    private readonly options: SessionOptions,
  ) {
    const every = Math.max(250, Math.min(options.idleMs, options.handshakeMs, 60_000) / 2);
    // The index hears of a session's use at most once a second, and of a running call's at each sweep: it keeps a
    // session that long past its idle time, so that it never drops one this replica still counts as in use.
    this.indexLimits = { ...options, idleMs: options.idleMs + every + TOUCH_EVERY_MS };
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
    const store = host.services?.store;
    if (isShared(store)) this.fleet = new SessionFleet(store, host.logger, options, (message) => this.hear(message));
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
      const session = this.sessions.get(id) ?? (await this.restore(id, authInfo));
      // Another caller presenting this id is told the same as for an unknown id: nothing to probe.
      if (!session || session.ending || session.owner !== ownerOf(authInfo))
        return rpcErrorResponse(404, -32001, 'Session not found: initialize a new session');
      session.lastSeen = Date.now();
      session.authInfo = authInfo;
      if (this.fleet !== undefined) {
        const routed = await this.route(id, session, request, body);
        if (routed !== undefined) return routed;
        const refused = this.track(session, body);
        if (refused !== undefined) return refused;
        this.keep(id, session, body);
      }
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
    const caller = callerKey(authInfo);
    const room = this.makeRoom(bytes, caller);
    if (room === 'caller') return callerOverShare();
    if (room === 'full') return rpcErrorResponse(503, -32000, 'Too many sessions: retry later');
    const sessionId = randomUUID();
    // In a fleet the bounds hold over every replica: the store's index makes room, evicting anywhere (within the
    // caller's share, the caller's own sessions first).
    if (this.fleet !== undefined && !(await this.fleet.admit(sessionId, bytes, this.indexLimits, caller)))
      return rpcErrorResponse(503, -32000, 'Too many sessions: retry later');
    return this.open(request, options, bytes, ownerOf(authInfo), caller, sessionId);
  }

  /**
   * Charges a session's resource subscriptions to its memory: to the budget
   * and its caller's share while it is counted (a copy being rebuilt carries
   * them into `add`). Room is made as for a new session, never by evicting the
   * session itself; a subscription that still does not fit is refused.
   */
  private meter(session: Session): void {
    meterSubscriptions(session.sdk, {
      charge: (bytes) => {
        if (session.counted && !this.grow(session, bytes)) return false;
        session.bytes += bytes;
        return true;
      },
      release: (bytes) => {
        session.bytes -= bytes;
        if (!session.counted) return;
        this.memory -= bytes;
        const held = session.caller === undefined ? undefined : this.callers.get(session.caller);
        if (held !== undefined) held.bytes -= bytes;
      },
    });
  }

  /**
   * Makes room for a counted session to grow by `bytes`, as for a new session
   * (the session itself runs the request that grows it, so it is never the
   * one evicted), and counts them; false when only busy sessions are left.
   */
  private grow(session: Session, bytes: number): boolean {
    if (this.makeRoom(bytes, session.caller, true) !== 'room' || !session.counted) return false;
    this.memory += bytes;
    const held = session.caller === undefined ? undefined : this.callers.get(session.caller);
    if (held !== undefined) held.bytes += bytes;
    return true;
  }

  /**
   * Evicts sessions until one more of `bytes` fits: first within `caller`'s
   * share, evicting the caller's own sessions (least recently used first),
   * so that one caller never takes another's room; then within the count
   * and the memory budget, evicting unfinished handshakes (oldest first),
   * then idle sessions (least recently used first). A session with a
   * request running is never evicted: `caller` or `full` when only such
   * sessions are left. `growing`: the bytes are a session's growth, not a new
   * session, so only the memory bounds apply, not the counts.
   */
  private makeRoom(bytes: number, caller: string | undefined, growing = false): 'room' | 'caller' | 'full' {
    if (caller !== undefined) {
      const mine = (session: Session) => session.caller === caller;
      while (!this.callerFits(caller, bytes, growing)) {
        const victim = this.leastRecentlyUsed(mine);
        if (victim === undefined) return 'caller';
        this.evict(victim[0], victim[1], 'http.session_evicted', "evicting a caller's session to keep its share");
      }
    }
    const fits = () =>
      (growing || this.sessions.size < this.options.maxSessions) && this.memory + bytes <= this.options.maxMemoryBytes;
    while (!fits()) {
      let victim: [string, Session] | undefined;
      for (const entry of this.sessions) {
        if (!entry[1].initialized && entry[1].inflight === 0) {
          victim = entry;
          break;
        }
      }
      victim ??= this.leastRecentlyUsed(() => true);
      if (victim === undefined) return 'full';
      this.evict(victim[0], victim[1], 'http.session_evicted', 'evicting a session to make room');
    }
    return 'room';
  }

  /**
   * Whether one more session of `bytes` fits the caller's share (its first
   * always does), or, `growing`, whether its sessions may hold `bytes` more.
   */
  private callerFits(caller: string, bytes: number, growing = false): boolean {
    const held = this.callers.get(caller);
    if (growing) return (held?.bytes ?? 0) + bytes <= this.options.maxMemoryBytesPerCaller;
    if (held === undefined || held.count === 0) return true;
    return held.count < this.options.maxSessionsPerCaller && held.bytes + bytes <= this.options.maxMemoryBytesPerCaller;
  }

  /** The least recently used session `which` picks that has no request running. */
  private leastRecentlyUsed(which: (session: Session) => boolean): [string, Session] | undefined {
    let victim: [string, Session] | undefined;
    for (const entry of this.sessions) {
      if (entry[1].inflight > 0 || !which(entry[1])) continue;
      if (victim === undefined || entry[1].lastSeen < victim[1].lastSeen) victim = entry;
    }
    return victim;
  }

  /** Keeps a session (or this replica's copy of one), counted against the bounds and its caller's share. */
  private add(id: string, session: Session): void {
    this.sessions.set(id, session);
    session.counted = true;
    this.memory += session.bytes;
    if (session.caller === undefined) return;
    const held = this.callers.get(session.caller) ?? { count: 0, bytes: 0 };
    held.count++;
    held.bytes += session.bytes;
    this.callers.set(session.caller, held);
  }

  private evict(id: string, session: Session, event: string, message: string): void {
    this.forget(id);
    this.host.logger.debug({ event, session: id, initialized: session.initialized }, message);
    void session.sdk.close().catch(() => {});
  }

  /** Forgets a session, or only that copy of it when `copy` is given (a copy built twice closes the spare). */
  private forget(id: string, copy?: Session): void {
    const session = this.sessions.get(id);
    if (session === undefined || (copy !== undefined && copy !== session)) return;
    this.sessions.delete(id);
    session.counted = false;
    this.memory -= session.bytes;
    const { caller } = session;
    const held = caller === undefined ? undefined : this.callers.get(caller);
    if (caller === undefined || held === undefined) return;
    held.count--;
    held.bytes -= session.bytes;
    if (held.count <= 0) this.callers.delete(caller);
  }

  private async open(
    request: Request,
    options: { parsedBody: unknown; authInfo?: AuthInfo },
    bytes: number,
    owner: string | undefined,
    caller: string | undefined,
    sessionId: string,
  ): Promise<Response> {
    const sdk = this.host.createSdkServer('http');
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessioninitialized: async (sessionId) => {
        this.add(sessionId, session);
        if (this.fleet === undefined) return;
        session.record = { owner: owner ?? null, init: options.parsedBody, bytes, ready: false };
        await this.save(sessionId, session);
      },
      onsessionclosed: (sessionId) => this.closed(sessionId),
    });
    const session = newSession(transport, sdk, bytes, owner, caller);
    this.meter(session);
    transport.onclose = () => {
      if (transport.sessionId) this.forget(transport.sessionId);
    };
    session.authInfo = options.authInfo;
    await sdk.connect(transport);
    trackInflight(session, this.pusher(transport), this.recorder(session));
    return transport.handleRequest(request, options);
  }

  /** How a copy of a session sends a message to the GET stream another replica holds; undefined alone. */
  private pusher(transport: WebStandardStreamableHTTPServerTransport): ((m: JSONRPCMessage) => void) | undefined {
    const fleet = this.fleet;
    if (fleet === undefined) return undefined;
    return (message) => {
      const s = transport.sessionId;
      if (s !== undefined) void fleet.publish({ t: 'push', s, m: message }).catch(() => {});
    };
  }

  /**
   * Builds this replica's copy of a session another replica opened, from its
   * record in the store: one read, then the copy serves the session's next
   * requests here with no further read. Undefined when the store has no such
   * session (never opened, expired, ended) or no room is left here.
   */
  private restore(id: string, authInfo: AuthInfo | undefined): Promise<Session | undefined> {
    const fleet = this.fleet;
    if (fleet === undefined || !isSessionId(id)) return Promise.resolve(undefined);
    let pending = this.restoring.get(id);
    if (pending === undefined) {
      pending = this.rebuild(fleet, id, authInfo).finally(() => {
        this.restoring.delete(id);
        this.heardWhileRestoring.delete(id);
      });
      this.restoring.set(id, pending);
    }
    return pending;
  }

  private async rebuild(fleet: SessionFleet, id: string, authInfo: AuthInfo | undefined): Promise<Session | undefined> {
    let record: SessionRecord | undefined;
    try {
      record = await fleet.read(id);
    } catch (error) {
      this.host.logger.warn({ event: 'http.session_unreadable', err: error }, 'cannot read a session from the store');
      return undefined;
    }
    // The caller is checked before anything is built: someone else's session id costs one read, nothing more.
    if (record === undefined || record.owner !== (ownerOf(authInfo) ?? null)) return undefined;
    // A record the fleet's index does not hold is of a session that ended (its record written back by a late
    // refresh) or was never counted: it is not served, and goes.
    if ((await fleet.touch(id, record.ready)) === false) {
      void fleet.remove(id).catch(() => {});
      return undefined;
    }
    // Room for the copy's subscriptions too: they are replayed (and charged to it) before it is counted.
    const subscribed = (record.subscriptions ?? []).reduce((sum, uri) => sum + subscriptionBytes(uri), 0);
    const base = typeof record.bytes === 'number' ? record.bytes : SESSION_OVERHEAD_BYTES;
    const bytes = base + subscribed;
    const caller = callerKey(authInfo);
    const room = this.makeRoom(bytes, caller);
    // Past the caller's share here only while its other copies run requests (one may be of a session evicted
    // elsewhere, finishing its call): a session the fleet admitted is still served, within this replica's bounds.
    if (room === 'full' || (room === 'caller' && this.makeRoom(bytes, undefined) === 'full')) return undefined;
    const sdk = this.host.createSdkServer('http');
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      maxRequestBodySize: this.options.maxBodyBytes,
      onsessionclosed: (sessionId) => this.closed(sessionId),
    });
    const session = newSession(transport, sdk, base, record.owner ?? undefined, caller);
    this.meter(session);
    Object.assign(session, { initialized: record.ready, record, written: session.opened });
    transport.onclose = () => this.forget(id, session);
    await sdk.connect(transport);
    await replay(transport, record.init, authInfo);
    // The transport took the replayed initialize only if it now names the session: else no half-built copy is kept.
    if (transport.sessionId !== id) {
      void sdk.close().catch(() => {});
      return undefined;
    }
    await replay(transport, { jsonrpc: '2.0', method: 'notifications/initialized' }, authInfo);
    if (record.level !== undefined) await replay(transport, record.level, authInfo);
    // Subscribed here too: an update this replica's upstream hears reaches the client through the stream's holder.
    for (const uri of record.subscriptions ?? []) await replay(transport, subscribeRequest(uri), authInfo);
    session.authInfo = authInfo;
    trackInflight(session, this.pusher(transport), this.recorder(session));
    // Another request may have built it meanwhile (the map is checked first): keep one.
    const raced = this.sessions.get(id);
    if (raced !== undefined) {
      void sdk.close().catch(() => {});
      return raced;
    }
    this.add(id, session);
    this.host.logger.debug({ event: 'http.session_restored', session: id }, 'serving a session opened elsewhere');
    // What other replicas said of the session while its record was read and replayed applies now (a subscription
    // recorded after the read, its end).
    const heard = this.heardWhileRestoring.get(id);
    this.heardWhileRestoring.delete(id);
    for (const message of heard ?? []) this.hear(message);
    return session;
  }

  /**
   * A POST that carries only answers and notifications, some of them for a
   * call another replica runs (the answer to its elicitation, the
   * cancellation of its call): those go to that replica through the store's
   * bus, the rest are taken here. Undefined when the request is for this
   * replica's transport as usual.
   */
  private async route(id: string, session: Session, request: Request, body: unknown): Promise<Response | undefined> {
    if (request.method !== 'POST' || this.fleet === undefined) return undefined;
    const parts: unknown[] = Array.isArray(body) ? body : [body];
    if (parts.some((m) => typeof m !== 'object' || m === null || ('method' in m && 'id' in m))) return undefined;
    const messages = parts as JSONRPCMessage[];
    const elsewhere = messages.filter((m) => !awaits(session, m));
    if (elsewhere.length === 0) return undefined;
    if (elsewhere.length > MAX_ROUTED_MESSAGES)
      return rpcErrorResponse(400, -32600, `At most ${MAX_ROUTED_MESSAGES} answers for other replicas in one request`);
    // Each caller's share of the bus: a made-up answer costs every replica a read, and a flood would get their
    // subscriptions dropped by Redis, and the messages they held lost.
    // Sessions without a verified caller share one: opening more of them buys no more of the bus.
    if (!this.routed.take(session.caller ?? '', Buffer.byteLength(JSON.stringify(elsewhere))))
      return new Response(
        rpcErrorBody(null, -32000, 'Too many answers for other replicas from this caller: retry in a second'),
        { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' } },
      );
    try {
      await this.fleet.publish({ t: 'route', s: id, m: elsewhere });
    } catch (error) {
      this.host.logger.warn(
        { event: 'http.session_route_failed', err: error },
        'cannot route a message to its replica',
      );
      return rpcErrorResponse(503, -32000, 'Cannot reach the replica that waits for this answer: retry');
    }
    for (const message of messages) if (awaits(session, message)) session.transport.onmessage?.(message);
    session.initialized = true;
    return new Response(null, { status: 202 });
  }

  /** What another replica said about a session this replica may hold a copy of. */
  private hear(message: FleetMessage): void {
    const session = this.sessions.get(message.s);
    if (session === undefined) {
      // A copy being built from a record read before this message was sent hears it once it is built.
      if (this.restoring.has(message.s) && message.t !== 'push' && message.t !== 'route') {
        const heard = this.heardWhileRestoring.get(message.s) ?? [];
        if (heard.length < MAX_HEARD_WHILE_RESTORING) heard.push(message);
        this.heardWhileRestoring.set(message.s, heard);
      }
      return;
    }
    if (message.t === 'closed') {
      const end = () => this.evict(message.s, session, 'http.session_closed', 'a session ended');
      // Evicted elsewhere while a call of it runs here (no replica sees another's calls): the call finishes first.
      if (session.inflight === 0) end();
      else Object.assign(session, { ending: true, ended: end });
      return;
    }
    if (message.t === 'route') {
      for (const m of message.m) if (awaits(session, m)) session.transport.onmessage?.(m);
      return;
    }
    if (message.t === 'push') {
      if (holdsStream(session.transport)) void session.sendRaw?.(message.m).catch(() => {});
      return;
    }
    // This copy's record follows, so that its own refresh of the record keeps the change.
    const record = session.record;
    if (record !== undefined && message.t === 'level') session.record = { ...record, level: message.m };
    const change = message.t === 'sub' ? subscriptionChange(message.m) : undefined;
    if (record !== undefined && change !== undefined) session.record = withSubscription(record, change);
    if (message.t === 'sub' && change === undefined) return;
    // Under an id of its own (the client's may be in use here), as the caller who last used this copy.
    const replayed = { ...message.m, id: `sluice-replay-${randomUUID()}` } as JSONRPCMessage;
    session.replaying = session.replaying
      .then(() => replay(session.transport, replayed, session.authInfo))
      .catch(() => {});
  }

  /**
   * Keeps the store's record in step with what this request changes: the
   * handshake finishing, the log level; and refreshes its expiry, at most once
   * a quarter of the idle time per replica (a write, never a read).
   */
  private keep(id: string, session: Session, body: unknown): void {
    const record = session.record;
    if (record === undefined || this.fleet === undefined) return;
    const level = namesMethod(body, 'logging/setLevel') ? body : undefined;
    const stale = Date.now() - session.written > this.options.idleMs / 4;
    const changed = !record.ready || level !== undefined;
    if (changed || stale) {
      session.record = { ...record, ready: true, ...(level === undefined ? {} : { level }) };
      // A refresh alone asks the index first: it never writes back the record of a session that ended elsewhere.
      void (changed ? this.save(id, session) : this.refresh(id, session));
      if (level !== undefined)
        void this.fleet.publish({ t: 'level', s: id, m: level as JSONRPCMessage }).catch(() => {});
    }
    this.touch(id, session);
  }

  /** Extends a session's record, once the fleet's index says the session is still held. */
  private async refresh(id: string, session: Session): Promise<void> {
    session.written = Date.now();
    const held = await this.fleet?.touch(id, true);
    if (held === false) this.left(id, session);
    else await this.save(id, session);
  }

  /**
   * The fleet's index no longer holds a session this replica serves: it
   * ended or was evicted on another replica, and the bus lost the word (a
   * subscriber Redis dropped, a flood), or it was opened while the store was
   * away and never counted. The copy ends here, and any record a refresh
   * wrote back with it.
   */
  private left(id: string, session: Session): void {
    if (this.sessions.get(id) !== session) return;
    void this.fleet?.remove(id).catch(() => {});
    const end = () => this.evict(id, session, 'http.session_left', 'closing a session the fleet no longer holds');
    if (session.inflight === 0) end();
    else Object.assign(session, { ending: true, ended: end });
  }

  /**
   * Notes a subscription change the client asks of this copy, to record once
   * it is answered without error; one the record has no room for is refused.
   */
  private track(session: Session, body: unknown): Response | undefined {
    const change = subscriptionChange(body);
    if (change === undefined || session.record === undefined) return undefined;
    if (change.on && !subscriptionFits(session.record, change.uri)) {
      return new Response(
        rpcErrorBody(
          change.id,
          -32602,
          'This session holds as many resource subscriptions as it may keep: unsubscribe from one first',
        ),
        { status: 200, headers: { 'content-type': 'application/json' } },
      );
    }
    session.changing.set(change.id, change);
    if (session.changing.size > MAX_ASKED) session.changing.delete(session.changing.keys().next().value as RequestId);
    return undefined;
  }

  /**
   * Records a subscription change once this copy answered it: in the store,
   * for copies built later, and to every copy there is, which applies it too.
   */
  private recorder(session: Session): ((id: RequestId) => void) | undefined {
    const fleet = this.fleet;
    if (fleet === undefined) return undefined;
    return (requestId) => {
      const change = session.changing.get(requestId);
      const s = session.transport.sessionId;
      if (change === undefined || s === undefined || session.record === undefined) return;
      session.changing.delete(requestId);
      session.record = withSubscription(session.record, change);
      void this.save(s, session);
      void fleet.publish({ t: 'sub', s, m: change.message }).catch(() => {});
    };
  }

  /** Tells the fleet's index the session is in use: when its handshake finishes, then at most once a second here. */
  private touch(id: string, session: Session): void {
    const now = Date.now();
    const ready = session.record?.ready === true;
    if (session.touched.ready === ready && now - session.touched.at < TOUCH_EVERY_MS) return;
    session.touched = { at: now, ready };
    void this.fleet?.touch(id, ready).then((held) => {
      if (held === false) this.left(id, session);
    });
  }

  private async save(id: string, session: Session): Promise<void> {
    if (session.record === undefined || this.fleet === undefined) return;
    session.written = Date.now();
    try {
      await this.fleet.write(id, session.record);
    } catch (error) {
      this.host.logger.warn(
        { event: 'http.session_unsaved', err: error },
        'cannot write a session to the store: other replicas will not know it',
      );
    }
  }

  /** The client ended its session (DELETE): here, and on every replica. */
  private closed(id: string): void {
    this.forget(id);
    void this.fleet?.remove(id).catch(() => {});
  }

  /**
   * Tells every open session what changed. A change to some items of a list
   * reaches the sessions whose caller may see one of them. An upstream's log
   * message sent outside any call belongs to no caller, and verified callers
   * may each be granted a different part of the server: it goes only to
   * sessions without one (a listener without authentication, where every
   * caller is alike).
   */
  notify(change: ListChange): void {
    const ambientLog = typeof change === 'object' && 'log' in change;
    let withheld = 0;
    for (const session of this.sessions.values())
      if (!ambientLog || session.caller === undefined)
        sendChange(session.sdk, change, { authInfo: session.authInfo, transport: 'http' });
      else withheld++;
    if (withheld > 0)
      this.host.logger.debug(
        { event: 'http.log_withheld', sessions: withheld },
        "an upstream's log message outside any call was not sent to sessions of verified callers",
      );
  }

  /** Estimated memory the open sessions hold, in bytes. */
  get memoryBytes(): number {
    return this.memory;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, session] of this.sessions) {
      if (session.inflight > 0) {
        // A call that runs long keeps its session off the end of the fleet's eviction order.
        if (this.fleet !== undefined) this.touch(id, session);
        continue;
      }
      if (!session.initialized && session.opened < now - this.options.handshakeMs)
        this.evict(id, session, 'http.session_unfinished', 'closing a session whose handshake never finished');
      else if (session.lastSeen < now - this.options.idleMs)
        this.evict(id, session, 'http.session_expired', 'closing an idle session');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    // The records stay: another replica takes the sessions over.
    this.fleet?.close();
    const open = [...this.sessions.values()];
    this.sessions.clear();
    this.callers.clear();
    this.memory = 0;
    await Promise.allSettled(open.map((s) => s.sdk.close()));
  }
}
