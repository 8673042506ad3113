import type { Socket } from 'node:net';
import { callerKeyOf, identityOf } from '@sluice/core';
import type { AuthInfo } from '@sluice/core';

/** The listener's shares of its connections and held streams, as configured or defaulted from `maxConnections`. */
export interface ShareLimits {
  /** Connections open at once. */
  readonly maxConnections: number;
  /** Connections that have not yet had a request admitted (no credential checked yet, or a wrong one). */
  readonly maxUnauthenticatedConnections: number;
  /** Connections one verified caller (an API key, a token's subject) holds at once. */
  readonly maxConnectionsPerCaller: number;
  /** Held streams (2025-11-25 GET event streams, 2026-07-28 `subscriptions/listen`) open at once. */
  readonly maxHeldStreams: number;
  /** Held streams one verified caller holds at once. */
  readonly maxHeldStreamsPerCaller: number;
  /** A held stream that carried nothing but keep-alives this long is closed (the client reconnects). */
  readonly heldStreamIdleMs: number;
}

/** What the shares hold now and how often they refused, for `/metrics`. */
export interface ShareUsage {
  readonly limits: ShareLimits;
  readonly unauthenticatedConnections: number;
  readonly authenticatedConnections: number;
  readonly heldStreams: number;
  /** Callers holding at least one connection. */
  readonly callers: number;
  /** Refusals and evictions since the listener started, by share. */
  readonly refused: Readonly<Record<'unauthenticated' | 'perCaller' | 'heldStreams' | 'heldStreamsPerCaller', number>>;
  /** Held streams closed for carrying nothing but keep-alives. */
  readonly idleStreamsClosed: number;
}

/** A held stream as the shares see it: when it last carried an event, and how to close it. */
export interface HeldStream {
  readonly lastEventAt: number;
  close(): void;
}

/** How long a new connection has to send its first bytes before the unauthenticated share is enforced on it. */
const SILENT_GRACE_MS = 1_000;

interface Caller {
  connections: number;
  streams: number;
}

/** Who a verified caller is for the shares; undefined without authentication (no caller to share among). */
export function callerKey(authInfo: AuthInfo | undefined): string | undefined {
  return identityOf(authInfo) === undefined ? undefined : callerKeyOf(authInfo);
}

/**
 * Accounts the listener's connections and held streams per caller. A new
 * connection is unauthenticated until one of its requests is admitted; past
 * their share, the oldest unauthenticated connections are closed, so that
 * silent sockets can never take the room of callers that have a key. A
 * verified caller gets its share of connections and of held streams; past
 * them its request is refused (429), not anyone else's.
 */
export class ConnectionShares {
  private readonly unauthenticated = new Set<Socket>();
  /** When each socket arrived, in ms since the epoch. */
  private readonly arrivedAt = new WeakMap<Socket, number>();
  /** Unauthenticated sockets that sent a whole request's headers at least once. */
  private readonly requestedOnce = new WeakSet<Socket>();
  /** Unauthenticated sockets with a request being answered now. */
  private readonly answering = new Set<Socket>();
  private readonly owner = new Map<Socket, string | undefined>();
  private readonly callers = new Map<string, Caller>();
  private readonly streams = new Set<HeldStream>();
  private readonly refused = { unauthenticated: 0, perCaller: 0, heldStreams: 0, heldStreamsPerCaller: 0 };
  private idleStreamsClosed = 0;
  private trimTimer: NodeJS.Timeout | undefined;
  /** Whether a hard trim is scheduled (see `trimSoon`). */
  private hardTrim = false;
  private readonly sweep: NodeJS.Timeout;

  constructor(readonly limits: ShareLimits) {
    // Often enough that an idle stream is cut within a quarter of its idle time past it.
    this.sweep = setInterval(() => this.closeIdle(), Math.max(250, Math.floor(limits.heldStreamIdleMs / 4)));
    this.sweep.unref();
  }

  /**
   * A socket arrived: it waits unauthenticated. Past the unauthenticated
   * share, or past `maxConnections` in all, the least useful unauthenticated
   * socket is closed (see `leastUseful`); when every connection is admitted,
   * the newcomer is.
   */
  connected(socket: Socket): void {
    if (this.unauthenticated.size + this.owner.size >= this.limits.maxConnections && this.unauthenticated.size === 0) {
      this.refused.unauthenticated++;
      socket.destroy();
      return;
    }
    this.unauthenticated.add(socket);
    this.arrivedAt.set(socket, Date.now());
    socket.once('close', () => this.disconnected(socket));
    // Decided a moment later, once what the sockets sent has been read: a caller sends its request at once, and a
    // burst of hoarders' connections must not close it before its first bytes are seen. Far past the share, as soon
    // as the sockets accepted now have had their first read.
    if (!this.overShare()) return;
    if (this.farOver()) this.trimSoon();
    else this.trimLater();
  }

  /**
   * Trims hard after the next poll phase: a socket accepted in this one is
   * first read in the next, so the check phase after it knows which new
   * sockets sent a request and which are silent.
   */
  private trimSoon(): void {
    if (this.hardTrim) return;
    this.hardTrim = true;
    setImmediate(() =>
      setImmediate(() => {
        this.hardTrim = false;
        this.trim(true);
      }),
    );
  }

  /** Past twice `maxConnections`: sockets are closed at once, without waiting for what they send. */
  private farOver(): boolean {
    return this.unauthenticated.size + this.owner.size > 2 * this.limits.maxConnections;
  }

  private trimLater(): void {
    if (this.trimTimer !== undefined) return;
    // Trimmed after the next poll phase, not in the timer's: a loaded event loop runs timers before it reads what
    // sockets sent meanwhile, and a caller's request that arrived during the lag would count as silence.
    this.trimTimer = setTimeout(() => setImmediate(() => this.trim(false)), SILENT_GRACE_MS);
    this.trimTimer.unref();
  }

  private overShare(): boolean {
    return (
      this.unauthenticated.size > this.limits.maxUnauthenticatedConnections ||
      this.unauthenticated.size + this.owner.size > this.limits.maxConnections
    );
  }

  /**
   * Closes unauthenticated sockets while over the share; none still in its
   * grace or being answered unless `hard`, and then only while far past the
   * share. A flood of reconnecting hoarders keeps every socket young: closing
   * young ones down to the share would close a caller's socket whose request
   * is on its way, unread yet.
   */
  private trim(hard: boolean): void {
    clearTimeout(this.trimTimer);
    this.trimTimer = undefined;
    while (this.overShare() && this.unauthenticated.size > 0) {
      const victim = this.leastUseful(hard && this.farOver());
      if (victim === undefined) {
        this.trimLater();
        return;
      }
      this.unauthenticated.delete(victim);
      this.refused.unauthenticated++;
      victim.destroy();
    }
  }

  /** A request arrived on `socket` (its headers are in); it is being answered until the response closes. */
  requested(socket: Socket, response: { once(event: 'close', listener: () => void): unknown }): void {
    if (!this.unauthenticated.has(socket)) return;
    this.answering.add(socket);
    this.requestedOnce.add(socket);
    response.once('close', () => this.answering.delete(socket));
  }

  /**
   * The unauthenticated socket to close first: the oldest that has sent
   * nothing for longer than a grace (or is idle after a refused request),
   * then the oldest still sending its headers, then the oldest still in its
   * grace, then the oldest being answered (these two only when far past the
   * share). A caller that connects sends its request at once; a hoarder's
   * silent sockets go first. Among young sockets, first in, first out: under
   * a sustained flood every new socket, a caller's too, keeps its place for
   * as long as the flood takes to fill twice `maxConnections`.
   */
  private leastUseful(hard: boolean): Socket | undefined {
    let partial: Socket | undefined;
    let young: Socket | undefined;
    let answering: Socket | undefined;
    const graceStart = Date.now() - SILENT_GRACE_MS;
    for (const socket of this.unauthenticated) {
      if (this.answering.has(socket)) answering ??= socket;
      else if (socket.bytesRead > 0 && !this.requestedOnce.has(socket)) partial ??= socket;
      else if ((this.arrivedAt.get(socket) ?? 0) > graceStart) young ??= socket;
      else return socket;
    }
    return partial ?? (hard ? (young ?? answering) : undefined);
  }

  /**
   * A request on `socket` was admitted as `caller` (undefined without
   * authentication). False when the caller already holds its share of
   * connections: the request is refused and the connection closed.
   */
  admit(socket: Socket, caller: string | undefined): boolean {
    if (this.owner.has(socket)) return true;
    if (caller !== undefined) {
      const entry = this.callers.get(caller) ?? { connections: 0, streams: 0 };
      if (entry.connections >= this.limits.maxConnectionsPerCaller) {
        this.refused.perCaller++;
        return false;
      }
      entry.connections++;
      this.callers.set(caller, entry);
    }
    this.unauthenticated.delete(socket);
    this.answering.delete(socket);
    this.owner.set(socket, caller);
    return true;
  }

  /** Opens a held stream for `caller`; undefined (refused) past the caller's share or the total. */
  hold(caller: string | undefined, stream: HeldStream): (() => void) | undefined {
    if (this.streams.size >= this.limits.maxHeldStreams) {
      this.refused.heldStreams++;
      return undefined;
    }
    const entry = caller === undefined ? undefined : this.callers.get(caller);
    if (entry && entry.streams >= this.limits.maxHeldStreamsPerCaller) {
      this.refused.heldStreamsPerCaller++;
      return undefined;
    }
    if (entry) entry.streams++;
    this.streams.add(stream);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.streams.delete(stream);
      if (entry) entry.streams--;
    };
  }

  usage(): ShareUsage {
    return {
      limits: this.limits,
      unauthenticatedConnections: this.unauthenticated.size,
      authenticatedConnections: this.owner.size,
      heldStreams: this.streams.size,
      callers: this.callers.size,
      refused: { ...this.refused },
      idleStreamsClosed: this.idleStreamsClosed,
    };
  }

  close(): void {
    clearInterval(this.sweep);
    clearTimeout(this.trimTimer);
  }

  private disconnected(socket: Socket): void {
    this.unauthenticated.delete(socket);
    this.answering.delete(socket);
    if (!this.owner.has(socket)) return;
    const caller = this.owner.get(socket);
    this.owner.delete(socket);
    if (caller === undefined) return;
    const entry = this.callers.get(caller);
    if (!entry) return;
    entry.connections--;
    if (entry.connections <= 0 && entry.streams <= 0) this.callers.delete(caller);
  }

  private closeIdle(): void {
    const before = Date.now() - this.limits.heldStreamIdleMs;
    for (const stream of [...this.streams])
      if (stream.lastEventAt <= before) {
        this.idleStreamsClosed++;
        stream.close();
      }
  }
}

/** The shares' defaults, derived from `maxConnections` unless given. */
export function shareLimits(
  options: { readonly [K in keyof ShareLimits]?: ShareLimits[K] | undefined } & { readonly maxConnections: number },
): ShareLimits {
  const { maxConnections } = options;
  return {
    maxConnections,
    maxUnauthenticatedConnections: options.maxUnauthenticatedConnections ?? Math.max(1, Math.floor(maxConnections / 4)),
    maxConnectionsPerCaller: options.maxConnectionsPerCaller ?? Math.max(1, Math.floor(maxConnections / 4)),
    maxHeldStreams: options.maxHeldStreams ?? Math.max(1, Math.floor(maxConnections / 2)),
    maxHeldStreamsPerCaller: options.maxHeldStreamsPerCaller ?? Math.max(1, Math.floor(maxConnections / 16)),
    heldStreamIdleMs: options.heldStreamIdleMs ?? 10 * 60_000,
  };
}
