import { randomBytes } from 'node:crypto';
import { createDefaultLogger, parseOptions } from '@sluice/core';
import { checkWindow } from '@sluice/core/internal';
import type { Logger, Semaphore, SemaphoreOptions, SetOptions, Store, WindowCount } from '@sluice/core';
import { RedisAudit } from './audit.js';
import { Backend } from './backend.js';
import { Connection } from './connection.js';
import { RedisCredentials } from './credentials.js';
import { STORE_NAME, redisUnavailable, storeClosed } from './errors.js';
import { KeySpace } from './keys.js';
import { RedisMessages } from './messages.js';
import { RedisSessions } from './sessions.js';
import { RedisConnection, RedisStoreOptions } from './options.js';
import { RedisSemaphore } from './semaphore.js';
import type { SemaphoreHost } from './semaphore.js';
import { Values } from './values.js';
import { Wakeups } from './wakeups.js';

const LOCK: SemaphoreOptions = Object.freeze({ maxActive: 1, maxQueue: Number.POSITIVE_INFINITY });

/**
 * The store of a replicated deployment: semaphores, locks and values live in
 * Redis, so every replica enforces the same limits. Register it with
 * `createServer({ store })`; plugins see only the core `Store` interface.
 */
export class RedisStore implements Store {
  readonly kind = 'redis';
  private readonly backend: Backend;
  private readonly wakeups: Wakeups;
  private readonly host: SemaphoreHost;
  private readonly keys: KeySpace;
  private readonly values: Values;
  /** The credential vault's sealed records, shared by every replica. */
  readonly credentials: RedisCredentials;
  /** Messages between the replicas: 2025-11-25 sessions and console logins are shared through it. */
  readonly messages: RedisMessages;
  /** The audit chain, shared by every replica. */
  readonly audit: RedisAudit;
  /** The index that bounds 2025-11-25 sessions over every replica. */
  readonly sessions: RedisSessions;
  private readonly semaphores = new Map<string, RedisSemaphore>();
  private readonly replica = randomBytes(6).toString('base64url');
  private counter = 0;
  private closed = false;

  constructor(connection: RedisConnection, options: RedisStoreOptions = {}) {
    const parsed = parseOptions(STORE_NAME, RedisConnection, connection);
    const target = parsed.client === undefined ? { url: parsed.url ?? '' } : { client: parsed.client };
    const config = parseOptions(STORE_NAME, RedisStoreOptions, options);
    const logger: Logger = config.logger ?? createDefaultLogger(STORE_NAME);
    this.keys = new KeySpace(config.keyPrefix);
    const link = new Connection(target, config.connectTimeoutMs, {
      onDown: (reason, atStart) => this.backend.lost(reason, atStart),
      onUp: (downMs) => this.backend.recovered(downMs),
    });
    this.backend = new Backend(link, config.onRedisLoss, logger);
    this.wakeups = new Wakeups(link.subscriber);
    this.values = new Values(this.backend, this.keys);
    this.credentials = new RedisCredentials(this.backend, this.keys);
    this.messages = new RedisMessages(this.backend, this.wakeups, this.keys);
    this.audit = new RedisAudit(this.backend, this.keys);
    this.sessions = new RedisSessions(this.backend, this.keys);
    this.host = {
      backend: this.backend,
      wakeups: this.wakeups,
      logger,
      defaultLeaseMs: config.leaseMs,
      nextId: () => `${this.replica}:${(++this.counter).toString(36)}`,
      idle: (semaphore) => {
        if (this.semaphores.get(semaphore.key) === semaphore) this.semaphores.delete(semaphore.key);
      },
    };
  }

  /** Resolves once Redis is reachable; rejects with `REDIS_UNAVAILABLE` if it is not within the connect timeout. */
  async ready(): Promise<void> {
    const link = this.backend.connection;
    try {
      await link.usable();
    } catch (error) {
      throw link.state === 'closed' ? storeClosed() : redisUnavailable(error);
    }
  }

  /** Whether commands reach Redis now (false while it is lost, or before the first connection). */
  get connected(): boolean {
    return this.backend.connection.state === 'up';
  }

  semaphore(key: string, options: SemaphoreOptions): Semaphore {
    const existing = this.semaphores.get(key);
    if (existing) {
      existing.configure(options);
      return existing;
    }
    const created = new RedisSemaphore(key, options, this.keys.semaphore(key), this.host);
    this.semaphores.set(key, created);
    return created;
  }

  lock(key: string): Semaphore {
    return this.semaphore(key, LOCK);
  }

  /** Semaphores this process tracks now; idle ones are collected. */
  get semaphoreCount(): number {
    return this.semaphores.size;
  }

  /** Wake-up channels this process is subscribed to now (one per key with waiting calls). */
  get channelCount(): number {
    return this.wakeups.size;
  }

  get<T = unknown>(key: string): Promise<T | undefined> {
    return this.backend.guard(
      'get',
      () => this.values.get<T>(key),
      (local) => local.get<T>(key),
    );
  }

  set(key: string, value: unknown, options?: SetOptions): Promise<void> {
    return this.backend.guard(
      'set',
      () => this.values.set(key, value, options),
      (local) => local.set(key, value, options),
    );
  }

  setIfAbsent(key: string, value: unknown, options?: SetOptions): Promise<boolean> {
    return this.backend.guard(
      'setIfAbsent',
      () => this.values.setIfAbsent(key, value, options),
      (local) => local.setIfAbsent(key, value, options),
    );
  }

  delete(key: string): Promise<boolean> {
    return this.backend.guard(
      'delete',
      () => this.values.delete(key),
      (local) => local.delete(key),
    );
  }

  compareAndDelete(key: string, expected: string | number | boolean): Promise<boolean> {
    return this.backend.guard(
      'compareAndDelete',
      () => this.values.compareAndDelete(key, expected),
      (local) => local.compareAndDelete(key, expected),
    );
  }

  increment(key: string, by = 1, options?: SetOptions): Promise<number> {
    return this.backend.guard(
      'increment',
      () => this.values.increment(key, by, options),
      (local) => local.increment(key, by, options),
    );
  }

  /** A window's counter timed by Redis (`PEXPIRE` when the key is made, `PTTL` for what is left): replicas' clocks never matter. */
  async incrementWindow(key: string, windowMs: number, by = 1): Promise<WindowCount> {
    // Checked before anything is written: a script stopped by a bad argument would keep what it wrote before it.
    checkWindow(windowMs, by);
    return await this.backend.guard(
      'incrementWindow',
      () => this.values.incrementWindow(key, windowMs, by),
      (local) => local.incrementWindow(key, windowMs, by),
    );
  }

  /** Fails waiting calls, gives back held leases, and closes the connections the store opened. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const semaphores = [...this.semaphores.values()];
    this.semaphores.clear();
    if (this.backend.connection.state === 'up') await Promise.allSettled(semaphores.map((s) => s.shutdown()));
    else for (const semaphore of semaphores) void semaphore.shutdown();
    await this.backend.connection.close();
    await this.backend.fallback.close();
  }
}

/**
 * A store in Redis for running several replicas: `redisStore({ url })` opens
 * and owns its connections; `redisStore({ client })` uses an ioredis client
 * you own (and duplicates it once for pub/sub). Bad options throw here.
 */
export function redisStore(connection: RedisConnection, options: RedisStoreOptions = {}): RedisStore {
  return new RedisStore(connection, options);
}
