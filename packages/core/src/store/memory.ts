import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import { MemoryAudit } from './memory-audit.js';
import { MemoryCredentials } from './memory-credentials.js';
import { LocalSemaphore } from './semaphore.js';
import type { FenceSource } from './semaphore.js';
import type { Semaphore, SemaphoreOptions, SetOptions, Store, WindowCount } from './types.js';
import { checkWindow } from './window.js';

interface Entry {
  value: unknown;
  expiresAt: number;
}

const LOCK: SemaphoreOptions = Object.freeze({ maxActive: 1, maxQueue: Number.POSITIVE_INFINITY });

/**
 * Idle semaphores kept for reuse, most recently idle last: a hot tool then
 * reuses its semaphore instead of building one per call, while keys used
 * once (action keys) still go once this many others have gone idle after them.
 */
const KEEP_IDLE = 64;

/**
 * Entries each write looks at for expiry, walking the map round and round.
 * More than one per write, so the sweep outpaces any stream of writes: an
 * expired entry is gone within a few passes' worth of writes.
 */
const SWEEP_STEP = 4;

/**
 * A semaphore that knows its key, so one function per store can collect any
 * of them, and that links into the store's line of idle semaphores.
 */
class KeyedSemaphore extends LocalSemaphore {
  idlePrev: KeyedSemaphore | undefined = undefined;
  idleNext: KeyedSemaphore | undefined = undefined;
  constructor(
    readonly key: string,
    options: SemaphoreOptions,
    fences: FenceSource,
    onIdle: (semaphore: LocalSemaphore) => void,
  ) {
    super(options, fences, onIdle);
  }
}

/** Idle semaphores, oldest first, as an intrusive list: no hashing on a call's path. */
class IdleLine {
  private head: KeyedSemaphore | undefined;
  private tail: KeyedSemaphore | undefined;
  size = 0;

  /** Puts a semaphore last, taking it out of its old place first. */
  touch(semaphore: KeyedSemaphore): void {
    if (semaphore === this.tail) return;
    if (semaphore.idlePrev !== undefined || semaphore === this.head) this.remove(semaphore);
    semaphore.idlePrev = this.tail;
    if (this.tail) this.tail.idleNext = semaphore;
    else this.head = semaphore;
    this.tail = semaphore;
    this.size++;
  }

  shift(): KeyedSemaphore | undefined {
    const first = this.head;
    if (first) this.remove(first);
    return first;
  }

  private remove(semaphore: KeyedSemaphore): void {
    if (semaphore.idlePrev) semaphore.idlePrev.idleNext = semaphore.idleNext;
    else this.head = semaphore.idleNext;
    if (semaphore.idleNext) semaphore.idleNext.idlePrev = semaphore.idlePrev;
    else this.tail = semaphore.idlePrev;
    semaphore.idlePrev = semaphore.idleNext = undefined;
    this.size--;
  }
}

/**
 * The embedded default: everything in this process. Values are stored as
 * structured clones, so a caller that mutates what it stored or read cannot
 * change the store behind its back, as with a remote store.
 */
export class MemoryStore implements Store {
  readonly kind = 'memory';
  private readonly semaphores = new Map<string, KeyedSemaphore>();
  private readonly entries = new Map<string, Entry>();
  private sweeper: Iterator<[string, Entry]> | undefined;
  private fence = 0;
  private readonly fences = { next: () => ++this.fence };
  private readonly idle = new IdleLine();
  private readonly collect = (semaphore: LocalSemaphore): void => {
    // Only this store's own semaphores call back here.
    if (semaphore instanceof KeyedSemaphore) this.rest(semaphore);
  };

  /** The credential vault's sealed records. */
  readonly credentials: MemoryCredentials;
  /** The audit chain. */
  readonly audit = new MemoryAudit();

  constructor(private readonly clock: Clock = systemClock) {
    this.credentials = new MemoryCredentials(clock);
  }

  semaphore(key: string, options: SemaphoreOptions): Semaphore {
    const existing = this.semaphores.get(key);
    if (existing) {
      existing.configure(options);
      return existing;
    }
    const created = new KeyedSemaphore(key, options, this.fences, this.collect);
    this.semaphores.set(key, created);
    // Idle until someone acquires: in line from the start, so one never used is collected too.
    this.rest(created);
    return created;
  }

  /** Puts an idle semaphore last in the idle line, and lets the oldest go when the line is too long. */
  private rest(idle: KeyedSemaphore): void {
    this.idle.touch(idle);
    if (this.idle.size <= KEEP_IDLE) return;
    const oldest = this.idle.shift() as KeyedSemaphore;
    // It may have been taken again since it went idle: then it stays, and comes back here when idle again.
    if (oldest.active === 0 && oldest.queued === 0 && this.semaphores.get(oldest.key) === oldest)
      this.semaphores.delete(oldest.key);
  }

  lock(key: string): Semaphore {
    return this.semaphore(key, LOCK);
  }

  /** Semaphores held in memory now: those in use, and at most 64 idle ones kept for reuse. */
  get semaphoreCount(): number {
    return this.semaphores.size;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store contract is async: a failure (structuredClone of an uncloneable value) must be a rejection
  async get<T = unknown>(key: string): Promise<T | undefined> {
    const entry = this.live(key);
    return entry === undefined ? undefined : (structuredClone(entry.value) as T);
  }

  /** Key-value entries held in memory now, expired ones not yet swept included. */
  get entryCount(): number {
    return this.entries.size;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store contract is async: a failure (structuredClone of an uncloneable value) must be a rejection
  async set(key: string, value: unknown, options: SetOptions = {}): Promise<void> {
    this.sweep();
    this.entries.set(key, { value: structuredClone(value), expiresAt: this.expiry(options) });
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store contract is async: a failure (structuredClone of an uncloneable value) must be a rejection
  async setIfAbsent(key: string, value: unknown, options: SetOptions = {}): Promise<boolean> {
    if (this.live(key) !== undefined) return false;
    this.sweep();
    this.entries.set(key, { value: structuredClone(value), expiresAt: this.expiry(options) });
    return true;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store contract is async: a failure (structuredClone of an uncloneable value) must be a rejection
  async delete(key: string): Promise<boolean> {
    const had = this.live(key) !== undefined;
    this.entries.delete(key);
    return had;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store contract is async, as a remote store's compare-and-delete is
  async compareAndDelete(key: string, expected: string | number | boolean): Promise<boolean> {
    if (this.live(key)?.value !== expected) return false;
    this.entries.delete(key);
    return true;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store contract is async: a failure (structuredClone of an uncloneable value) must be a rejection
  async increment(key: string, by = 1, options: SetOptions = {}): Promise<number> {
    const entry = this.live(key);
    const current = typeof entry?.value === 'number' ? entry.value : 0;
    const next = current + by;
    this.sweep();
    this.entries.set(key, { value: next, expiresAt: entry?.expiresAt ?? this.expiry(options) });
    return next;
  }

  /**
   * A window's counter, timed by this store's clock: the key lives `windowMs`
   * from its creation. A key holding anything but a whole count starts a
   * window afresh, from 0.
   */
  // eslint-disable-next-line @typescript-eslint/require-await -- the Store contract is async, as a remote store's counter is
  async incrementWindow(key: string, windowMs: number, by = 1): Promise<WindowCount> {
    checkWindow(windowMs, by);
    const found = this.live(key);
    const entry = found !== undefined && Number.isSafeInteger(found.value) ? found : undefined;
    const now = this.clock.now();
    const count = ((entry?.value as number | undefined) ?? 0) + by;
    const expiresAt =
      entry === undefined || entry.expiresAt === Number.POSITIVE_INFINITY ? now + windowMs : entry.expiresAt;
    this.sweep();
    this.entries.set(key, { value: count, expiresAt });
    return { count, resetMs: Math.max(1, expiresAt - now) };
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the Store contract is async: a failure (structuredClone of an uncloneable value) must be a rejection
  async close(): Promise<void> {
    this.entries.clear();
    this.sweeper = undefined;
  }

  /** Drops the expired among the next few entries: amortised, so keys written once with a TTL do not pile up. */
  private sweep(): void {
    const now = this.clock.now();
    for (let i = 0; i < SWEEP_STEP; i++) {
      this.sweeper ??= this.entries.entries();
      const next = this.sweeper.next();
      if (next.done === true) {
        this.sweeper = undefined;
        return;
      }
      const [key, entry] = next.value;
      if (entry.expiresAt <= now) this.entries.delete(key);
    }
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private expiry(options: SetOptions): number {
    if (options.ttlMs !== undefined && !(Number.isFinite(options.ttlMs) && options.ttlMs >= 0)) {
      throw new RangeError(`ttlMs must be a finite number of milliseconds >= 0, not ${String(options.ttlMs)}`);
    }
    return options.ttlMs === undefined ? Number.POSITIVE_INFINITY : this.clock.now() + options.ttlMs;
  }
}
