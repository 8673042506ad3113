import { isInitializeRequest } from '@modelcontextprotocol/server';
import type { JSONRPCMessage, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { canonicalUri } from '@sluice/core';
import type { AuthInfo, Logger, MessageBus, SessionIndexLimits, Store } from '@sluice/core';

/**
 * What a replica needs to serve a 2025-11-25 session it did not open: kept in
 * the store from `initialize` on, so that a fleet needs no sticky sessions.
 */
export interface SessionRecord {
  /** Who opened the session (`method:subject`), or null without authentication. */
  readonly owner: string | null;
  /** The `initialize` request, replayed into a replica's own SDK server (bounded by `maxInitializeBytes`). */
  readonly init: unknown;
  /** The estimated memory a copy of the session costs a replica. */
  readonly bytes: number;
  /** Whether the client sent anything after `initialize`. */
  readonly ready: boolean;
  /** The last `logging/setLevel` request, replayed with `init`. */
  readonly level?: unknown;
  /** The resources the client subscribed to (canonical URIs), subscribed again by every copy. */
  readonly subscriptions?: readonly string[];
}

/**
 * What one replica tells the others about a session: answers and
 * cancellations for the replica whose call waits for them, messages for the
 * replica that holds the session's GET stream, and changes every copy must
 * apply.
 */
export type FleetMessage =
  | { readonly t: 'route'; readonly s: string; readonly m: readonly JSONRPCMessage[] }
  | { readonly t: 'push'; readonly s: string; readonly m: JSONRPCMessage }
  | { readonly t: 'level'; readonly s: string; readonly m: JSONRPCMessage }
  | { readonly t: 'sub'; readonly s: string; readonly m: JSONRPCMessage }
  | { readonly t: 'closed'; readonly s: string };

/** The one bus channel of the sessions: every replica listens, and acts only on the sessions it holds. */
const CHANNEL = 'mcp-sessions';

/** A session id as the SDK makes them (a UUID): anything else is not looked up in the store. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isSessionId = (id: string): boolean => SESSION_ID.test(id);

/** Largest bus message read back: what is routed was bounded by the request body limit before. */
const MAX_FLEET_MESSAGE_BYTES = 8 * 1024 * 1024;

function parseFleetMessage(text: string): FleetMessage | undefined {
  if (text.length > MAX_FLEET_MESSAGE_BYTES) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { t, s, m } = value as { t?: unknown; s?: unknown; m?: unknown };
  if (typeof s !== 'string' || !isSessionId(s)) return undefined;
  if (t === 'closed') return { t, s };
  if (t === 'route' && Array.isArray(m) && m.every(isMessage)) return { t, s, m };
  if ((t === 'push' || t === 'level' || t === 'sub') && isMessage(m)) return { t, s, m };
  return undefined;
}

function isMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

/** Answers one POST may send to other replicas: a client answers a call's questions one or a few at a time. */
export const MAX_ROUTED_MESSAGES = 32;

/** Bytes of answers one caller (or one session without a caller) may send to other replicas per second, here. */
export const MAX_ROUTED_BYTES_PER_SECOND = 1024 * 1024;

/** Bytes of answers all callers together may send to other replicas per second, here. */
export const MAX_ROUTED_BYTES_PER_SECOND_ALL = 8 * 1024 * 1024;

/**
 * Bytes of answers each caller may send per second even when everyone's total is spent: a real answer is small, so
 * callers flooding together cannot starve another's.
 */
export const ROUTED_BYTES_FLOOR = 64 * 1024;

/**
 * Each caller's share of the answers routed through the bus, in a window of
 * a second: every replica reads every routed message, and Redis drops a
 * subscriber that falls behind (with every message it held for it), so one
 * caller posting made-up answers must not fill it.
 */
export class RouteBudget {
  private window = 0;
  private total = 0;
  private readonly spent = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Whether `bytes` more fit in `who`'s share, and in everyone's (or within
   * `who`'s floor), now; counted only if they do.
   */
  take(who: string, bytes: number): boolean {
    const window = Math.floor(this.now() / 1_000);
    if (window !== this.window) {
      this.window = window;
      this.total = 0;
      this.spent.clear();
    }
    const spent = (this.spent.get(who) ?? 0) + bytes;
    if (spent > MAX_ROUTED_BYTES_PER_SECOND) return false;
    if (spent > ROUTED_BYTES_FLOOR && this.total + bytes > MAX_ROUTED_BYTES_PER_SECOND_ALL) return false;
    this.spent.set(who, spent);
    this.total += bytes;
    return true;
  }
}

/** A store that several processes share: it has a message bus. */
export type SharedStore = Store & { readonly messages: MessageBus };

export const isShared = (store: Store | undefined): store is SharedStore => store?.messages !== undefined;

/**
 * The sessions' side of the store: their records (one read when a replica
 * meets a session it has no copy of, a write when one opens or changes) and
 * their messages.
 */
export class SessionFleet {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: SharedStore,
    private readonly logger: Logger,
    private readonly ttl: { readonly idleMs: number; readonly handshakeMs: number },
    onMessage: (message: FleetMessage) => void,
  ) {
    // Not awaited: a listener starts even while Redis is away (the subscription is made once it is back).
    void store.messages
      .subscribe(CHANNEL, (text) => {
        const message = parseFleetMessage(text);
        if (message) onMessage(message);
      })
      .then(
        (unsubscribe) => void (this.unsubscribe = unsubscribe),
        (error: unknown) =>
          this.logger.error(
            { event: 'http.session_bus_failed', err: error },
            'cannot listen for session messages: answers routed through other replicas are lost',
          ),
      );
  }

  async read(id: string): Promise<SessionRecord | undefined> {
    // What the store holds is checked like any input: another writer under the prefix may have put anything there.
    const record = await this.store.get(key(id));
    if (typeof record !== 'object' || record === null || !('init' in record)) return undefined;
    const { owner, init, subscriptions } = record as { owner?: unknown; init?: unknown; subscriptions?: unknown };
    if (!isInitializeRequest(init)) return undefined;
    if (owner !== null && typeof owner !== 'string') return undefined;
    // Subscriptions that are not a bounded list of URIs are dropped, not the session.
    return isSubscriptionList(subscriptions)
      ? (record as SessionRecord)
      : { ...(record as SessionRecord), subscriptions: [] };
  }

  /**
   * Counts a new session of `caller` in the fleet's index, when the store has
   * one: the sessions evicted to make room (the caller's own first, past its
   * share) end everywhere (record and copies). False when the session cannot
   * fit. Without an index, or with the store lost, each replica's own bounds
   * are all there is.
   */
  async admit(id: string, bytes: number, limits: SessionIndexLimits, caller: string | undefined): Promise<boolean> {
    const index = this.store.sessions;
    if (index === undefined) return true;
    let outcome: { admitted: boolean; evicted: string[] };
    try {
      outcome = await index.admit(id, bytes, limits, caller);
    } catch (error) {
      this.logger.warn(
        { event: 'http.session_index_failed', err: error },
        "cannot count a session in the store: only this replica's session bounds apply to it",
      );
      return true;
    }
    for (const evicted of outcome.evicted) {
      this.logger.debug({ event: 'http.session_evicted', session: evicted }, 'evicting a session to make room');
      await this.end(evicted).catch(() => {});
    }
    return outcome.admitted;
  }

  /**
   * The session was used here (`ready`: its handshake finished): the index's
   * least recently used goes first. Resolves false when the index no longer
   * holds the session: it ended or was evicted on another replica (whose word
   * of it may have been lost on the bus), or was never counted (opened while
   * the store was away). Undefined without an index, or when the store cannot
   * say.
   */
  async touch(id: string, ready: boolean): Promise<boolean | undefined> {
    const index = this.store.sessions;
    if (index === undefined) return undefined;
    try {
      return await index.touch(id, ready);
    } catch {
      return undefined;
    }
  }

  /** Writes a session's record; it lives `handshakeMs` until the client sends more, then `idleMs` from each write. */
  async write(id: string, record: SessionRecord): Promise<void> {
    await this.store.set(key(id), record, { ttlMs: record.ready ? this.ttl.idleMs : this.ttl.handshakeMs });
  }

  /** The session ended (the client's DELETE): its record goes, and every copy of it. */
  async remove(id: string): Promise<void> {
    // The record's delete is sent first, so that other replicas stop finding the session as soon as they can;
    // the DELETE is answered without waiting for either (the replica that answers has forgotten it already).
    await Promise.all([this.end(id), this.store.sessions?.remove(id)]);
  }

  private async end(id: string): Promise<void> {
    await this.store.delete(key(id));
    await this.publish({ t: 'closed', s: id });
  }

  async publish(message: FleetMessage): Promise<void> {
    await this.store.messages.publish(CHANNEL, JSON.stringify(message));
  }

  close(): void {
    this.unsubscribe?.();
  }
}

const key = (id: string): string => `mcp-session:${id}`;

/** Subscriptions a session's record keeps; further ones are refused while it holds this many. */
export const MAX_RECORDED_SUBSCRIPTIONS = 1_000;

/** Characters of subscribed URIs a session's record keeps, all together. */
export const MAX_RECORDED_SUBSCRIPTION_CHARS = 64 * 1024;

function isSubscriptionList(value: unknown): value is readonly string[] | undefined {
  if (value === undefined) return true;
  if (!Array.isArray(value) || value.length > MAX_RECORDED_SUBSCRIPTIONS) return false;
  let chars = 0;
  for (const uri of value as unknown[]) {
    if (typeof uri !== 'string') return false;
    chars += uri.length;
  }
  return chars <= MAX_RECORDED_SUBSCRIPTION_CHARS;
}

/** A `resources/subscribe` or `resources/unsubscribe` request: its id, URI (canonical) and which. */
export interface SubscriptionChange {
  readonly id: string | number;
  readonly uri: string;
  readonly on: boolean;
  readonly message: JSONRPCMessage;
}

/** The subscription change a client's message asks for, if it is one (an unreadable URI is not). */
export function subscriptionChange(body: unknown): SubscriptionChange | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: { uri?: unknown } };
  if (method !== 'resources/subscribe' && method !== 'resources/unsubscribe') return undefined;
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof params?.uri !== 'string') return undefined;
  try {
    return { id, uri: canonicalUri(params.uri), on: method === 'resources/subscribe', message: body as JSONRPCMessage };
  } catch {
    // The SDK server refuses it with the reason; nothing to record.
    return undefined;
  }
}

/** Whether a record can take one more subscription of `uri` within its bounds. */
export function subscriptionFits(record: SessionRecord, uri: string): boolean {
  const held = record.subscriptions ?? [];
  if (held.includes(uri)) return true;
  const chars = held.reduce((sum, u) => sum + u.length, 0);
  return held.length < MAX_RECORDED_SUBSCRIPTIONS && chars + uri.length <= MAX_RECORDED_SUBSCRIPTION_CHARS;
}

/** The record after a subscription change answered without error. */
export function withSubscription(
  record: SessionRecord,
  change: { readonly uri: string; readonly on: boolean },
): SessionRecord {
  const held = (record.subscriptions ?? []).filter((uri) => uri !== change.uri);
  return { ...record, subscriptions: change.on ? [...held, change.uri] : held };
}

/**
 * Runs one message through a session's transport as if its client had sent
 * it, and throws the answer away: how a replica brings its own copy of a
 * session to the state the client set up elsewhere (`initialize`, the log level).
 */
export async function replay(
  transport: WebStandardStreamableHTTPServerTransport,
  message: unknown,
  authInfo: AuthInfo | undefined,
): Promise<void> {
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  if (transport.sessionId !== undefined) headers['mcp-session-id'] = transport.sessionId;
  const request = new Request('http://session.replay/', { method: 'POST', headers });
  const response = await transport.handleRequest(request, { parsedBody: message, ...(authInfo ? { authInfo } : {}) });
  // Read to the end: the stream closes once the SDK server answered, so the copy is in that state now.
  await response.text();
}

/**
 * Whether this copy of a session holds its GET stream. The SDK's transport
 * keeps it under a fixed name in a private map; a transport without that map
 * (another SDK version) is taken to hold it, so nothing is routed away.
 */
export function holdsStream(transport: WebStandardStreamableHTTPServerTransport): boolean {
  const streams = (transport as unknown as { _streamMapping?: Map<string, unknown> })._streamMapping;
  return streams === undefined || streams.has('_GET_stream');
}
