import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import { LocalSemaphore } from './semaphore.js';
import type { Semaphore, SemaphoreOptions, SetOptions, Store } from './types.js';

interface Entry {
  value: unknown;
  expiresAt: number;
}

const LOCK: SemaphoreOptions = Object.freeze({ maxActive: 1, maxQueue: Number.POSITIVE_INFINITY });

/**
 * The embedded default: everything in this process. Values are stored as
 * structured clones, so a caller that mutates what it stored or read cannot
 * change the store behind its back, as with a remote store.
 */
export class MemoryStore implements Store {
  readonly kind = 'memory';
  private readonly semaphores = new Map<string, LocalSemaphore>();
  private readonly entries = new Map<string, Entry>();
  private fence = 0;
  private readonly fences = { next: () => ++this.fence };

  constructor(private readonly clock: Clock = systemClock) {}

  semaphore(key: string, options: SemaphoreOptions): Semaphore {
    const existing = this.semaphores.get(key);
    if (existing) {
      existing.configure(options);
      return existing;
    }
    const created = new LocalSemaphore(options, this.fences, (idle) => {
      if (this.semaphores.get(key) === idle) this.semaphores.delete(key);
    });
    this.semaphores.set(key, created);
    return created;
  }

  lock(key: string): Semaphore {
    return this.semaphore(key, LOCK);
  }

  /** Semaphores held in memory now; idle ones are collected. */
  get semaphoreCount(): number {
    return this.semaphores.size;
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const entry = this.live(key);
    return entry === undefined ? undefined : (structuredClone(entry.value) as T);
  }

  async set(key: string, value: unknown, options: SetOptions = {}): Promise<void> {
    this.entries.set(key, { value: structuredClone(value), expiresAt: this.expiry(options) });
  }

  async setIfAbsent(key: string, value: unknown, options: SetOptions = {}): Promise<boolean> {
    if (this.live(key) !== undefined) return false;
    this.entries.set(key, { value: structuredClone(value), expiresAt: this.expiry(options) });
    return true;
  }

  async delete(key: string): Promise<boolean> {
    const had = this.live(key) !== undefined;
    this.entries.delete(key);
    return had;
  }

  async increment(key: string, by = 1, options: SetOptions = {}): Promise<number> {
    const entry = this.live(key);
    const current = typeof entry?.value === 'number' ? entry.value : 0;
    const next = current + by;
    this.entries.set(key, { value: next, expiresAt: entry?.expiresAt ?? this.expiry(options) });
    return next;
  }

  async close(): Promise<void> {
    this.entries.clear();
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
    return options.ttlMs === undefined ? Number.POSITIVE_INFINITY : this.clock.now() + options.ttlMs;
  }
}
