/**
 * The shared state behind the guards. The in-memory store is the embedded
 * default; `@sluice/store-redis` implements the same interface so that many
 * replicas enforce one set of limits. Plugins only ever talk to this
 * interface, resolved from the server's container.
 */

export interface SemaphoreOptions {
  /** Calls that may hold a permit at once (>= 1). */
  readonly maxActive: number;
  /** Calls that may wait for a permit (>= 0). `Infinity` makes a lock that never sheds. */
  readonly maxQueue: number;
  /**
   * How long a permit lives unless refreshed, for stores where a holder can
   * die without releasing (a replica on Redis). The in-memory store ignores it.
   */
  readonly leaseMs?: number;
}

/** A held slot. */
export interface Permit {
  /**
   * A fencing token, strictly increasing per key: a resource guarded by a
   * lock can refuse writes from a holder whose token is older than one it saw.
   */
  readonly fence: number;
  /** Gives the slot back. Safe to call more than once: only the first counts. */
  release(): void;
}

/** The outcome of asking for a slot. */
export type Admission =
  | { readonly admitted: true; readonly permit: Permit }
  | {
      readonly admitted: false;
      /** Calls running when the call was shed. */
      readonly active: number;
      /** Calls waiting when the call was shed. */
      readonly queued: number;
    };

/**
 * A counting semaphore with a FIFO backpressure queue. Ask the store for it on
 * each call rather than keeping it: idle semaphores are collected.
 */
export interface Semaphore {
  /**
   * Takes a slot at once when one is free and nobody waits, without
   * allocating a promise: the fast path. `undefined` means "call `acquire`".
   */
  tryAcquire(): Permit | undefined;
  /**
   * Waits for a slot in FIFO order. Resolves `admitted: false` at once when
   * the queue is full. Rejects with the signal's reason if the signal fires
   * while waiting; the waiter then leaves the queue and no listener remains.
   */
  acquire(signal?: AbortSignal): Promise<Admission>;
  /** Slots held now (this process's view for distributed stores). */
  readonly active: number;
  /** Calls waiting now (this process's view for distributed stores). */
  readonly queued: number;
}

/** A window's counter after `Store.incrementWindow`. */
export interface WindowCount {
  /** The count in the window now. */
  readonly count: number;
  /** Ms until the window ends and the count starts again from zero (at least 1). */
  readonly resetMs: number;
}

export interface SetOptions {
  /** Time to live in milliseconds; absent means no expiry. */
  readonly ttlMs?: number;
}

/** Where one credential sits in the vault: one upstream, one caller. */
export interface CredentialSlot {
  readonly upstream: string;
  /** The caller's subject (`ctx.auth.subject`), or a fixed name for the gateway's own grant. */
  readonly subject: string;
}

/**
 * The credential vault's records in a store. Core's `CredentialVault` seals
 * each one (AES-256-GCM) before it gets here: a store keeps and shares
 * ciphertext only.
 */
export interface CredentialRecords {
  put(slot: CredentialSlot, sealed: string, options?: SetOptions): Promise<void>;
  get(slot: CredentialSlot): Promise<string | undefined>;
  /** The slots held that match the filter (an absent field matches any), at most `limit` (default 10 000). */
  list(filter?: Partial<CredentialSlot>, limit?: number): Promise<CredentialSlot[]>;
  /** Removes every record matching the filter (both fields: one record); resolves with how many went. */
  revoke(filter: Partial<CredentialSlot>): Promise<number>;
}

/**
 * Messages between the replicas of a fleet: what one replica publishes on a
 * channel reaches every replica subscribed to it (itself included), at most
 * once, and nothing is kept for a replica that was not listening.
 */
export interface MessageBus {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once subscribed, with the function that unsubscribes. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => void>;
}

/** The newest entry of the audit chain: its number and hash (`seq` 0 and the zero hash before the first). */
export interface AuditHead {
  readonly seq: number;
  readonly hash: string;
}

/**
 * Where the kept part of the audit chain starts: the number of the oldest
 * entry kept and the hash it must name as `prev`. Retention moves it forward
 * as it drops the oldest entries, so trimming is told apart from deleting.
 */
export interface AuditAnchor {
  readonly seq: number;
  readonly prev: string;
}

/** One entry as the store keeps it: its number and its JSON text (which carries `hash`). */
export interface StoredAuditEntry {
  readonly seq: number;
  readonly text: string;
}

/** A page of the chain read in one atomic step, with the anchor and head as they were then. */
export interface AuditPage {
  readonly anchor: AuditAnchor;
  readonly head: AuditHead;
  /** Entries numbered above the page's `after`, oldest first. */
  readonly entries: readonly StoredAuditEntry[];
}

/**
 * The audit chain's records in a store. `AuditLog` of `@sluice/audit` builds and hashes
 * each entry; the store only appends it if nobody appended since (a
 * compare-and-set on the head), trims the oldest past `maxEntries`, and
 * reads pages atomically.
 */
export interface AuditRecords {
  head(): Promise<AuditHead>;
  /**
   * Appends `entry` (numbered `head.seq + 1`, hashed `hash`) if the head is
   * still `expected`, then drops the oldest entries past `maxEntries`, moving
   * the anchor. Resolves with whether it appended and the head now.
   */
  append(
    entry: StoredAuditEntry & { readonly hash: string },
    expected: AuditHead,
    maxEntries: number,
  ): Promise<{ readonly appended: boolean; readonly head: AuditHead }>;
  /** Up to `limit` entries numbered above `after`, oldest first, with the anchor and head, read at once. */
  read(after: number, limit: number): Promise<AuditPage>;
}

/** The bounds a fleet's session index keeps (`SessionIndex.admit`). */
export interface SessionIndexLimits {
  /** Sessions open at once, over every replica. */
  readonly maxSessions: number;
  /** Estimated memory of all sessions together, over every replica. */
  readonly maxMemoryBytes: number;
  /** A session not used this long is dropped from the index. */
  readonly idleMs: number;
  /** A session whose handshake did not finish this long after it opened is dropped. */
  readonly handshakeMs: number;
  /** Sessions one caller holds at once, over every replica; absent, no caller has a share of its own. */
  readonly maxSessionsPerCaller?: number;
  /** Estimated memory of one caller's sessions together; a caller's only session is admitted whatever its size. */
  readonly maxMemoryBytesPerCaller?: number;
}

/**
 * Where a fleet counts its 2025-11-25 sessions, so that their count and
 * memory bounds hold over every replica, not per replica. Times are the
 * store's own, so replicas never compare clocks.
 */
export interface SessionIndex {
  /**
   * Counts a new session in, first making room: sessions past their idle or
   * handshake time leave; then, while `caller` would exceed its share, that
   * caller's own least recently used sessions; then, while a bound would be
   * exceeded, unfinished handshakes (oldest first), then the least recently
   * used. Resolves with whether it was counted in (false only when the
   * session alone exceeds the memory bound) and the ids that left to make
   * room. Without `caller` (no verified caller) the session has no share.
   */
  admit(
    id: string,
    bytes: number,
    limits: SessionIndexLimits,
    caller?: string,
  ): Promise<{ admitted: boolean; evicted: string[] }>;
  /** The session was used now; `ready`: its handshake has finished. False when the index no longer holds it. */
  touch(id: string, ready: boolean): Promise<boolean>;
  /** The session ended. */
  remove(id: string): Promise<void>;
}

export interface Store {
  /** A short name for logs: `memory`, `redis`. */
  readonly kind: string;
  semaphore(key: string, options: SemaphoreOptions): Semaphore;
  /** A FIFO mutex: a semaphore of one slot whose queue never sheds. */
  lock(key: string): Semaphore;
  get<T = unknown>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown, options?: SetOptions): Promise<void>;
  /** Sets only if the key is absent (or expired); true if it was set. Single-use tokens rely on this. */
  setIfAbsent(key: string, value: unknown, options?: SetOptions): Promise<boolean>;
  delete(key: string): Promise<boolean>;
  /**
   * Deletes the key only if it holds `expected` now, in one atomic step; true
   * if it did. A holder gives back what it claimed (with `setIfAbsent`) this
   * way: once its claim lapsed and another took the key, its late release
   * frees nothing. Values compare as JSON, so a number is never its string.
   */
  compareAndDelete(key: string, expected: string | number | boolean): Promise<boolean>;
  /** Adds `by` (default 1) and returns the new value; the TTL applies when the key is created. */
  increment(key: string, by?: number, options?: SetOptions): Promise<number>;
  /**
   * Adds `by` (an integer, default 1) to the counter of a fixed window of
   * `windowMs` that starts when the key is created, and tells the ms it has
   * left; both as the store measures time, so that processes sharing the
   * store count one window whatever their own clocks say (a window numbered
   * by each process's clock would be a different window on each). `by` 0
   * reads the count (and starts a window if none runs). A key holding
   * anything but a whole count starts a window afresh. A `windowMs` that is
   * not a number > 0, or a `by` that is not a whole number >= 0, is a
   * `RangeError` and writes nothing. Absent on stores that cannot; callers
   * then number windows by their own clock.
   */
  incrementWindow?(key: string, windowMs: number, by?: number): Promise<WindowCount>;
  /** The credential vault's sealed records; a store without them cannot back `upstreams[].auth` grants per caller. */
  readonly credentials?: CredentialRecords;
  /**
   * Present when several processes share the store: then 2025-11-25 sessions,
   * console logins and the messages for them are kept in the store and routed
   * through this bus. Absent (the in-memory store), all of it stays in this process.
   */
  readonly messages?: MessageBus;
  /** With `messages`: the index that bounds 2025-11-25 sessions over every process; without, each bounds its own. */
  readonly sessions?: SessionIndex;
  /** The audit chain; a store without it keeps no audit log (appends are dropped, and said so once). */
  readonly audit?: AuditRecords;
  close(): Promise<void>;
}
