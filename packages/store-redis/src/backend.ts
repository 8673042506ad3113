import { MemoryStore, SluiceError } from '@sluice/core';
import type { Logger } from '@sluice/core';
import type { Connection } from './connection.js';
import { commandFailed, isReplyError, redisUnavailable, storeClosed } from './errors.js';
import type { RedisLossPolicy } from './options.js';
import type { Script } from './scripts.js';

/** How often a fail-open replica repeats that it is serving from local memory. */
const FAIL_OPEN_REMINDER_MS = 10_000;

/**
 * Runs commands against Redis and decides what a failure means: a reply
 * error is a bug (always an error); a lost connection follows the loss
 * policy, failing closed with a coded error or falling back to this
 * replica's in-memory store.
 */
export class Backend {
  /** This replica's own state, used only while Redis is lost under `failOpen`. */
  readonly fallback = new MemoryStore();
  private servedLocally = 0;
  private lastReminder = 0;

  constructor(
    readonly connection: Connection,
    readonly policy: RedisLossPolicy,
    readonly logger: Logger,
  ) {}

  run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const waiting = this.connection.usable();
    if (waiting === undefined) return script.run(this.connection.client, keys, args);
    return waiting.then(() => script.run(this.connection.client, keys, args));
  }

  /** Runs a plain command once Redis is usable. */
  command<T>(send: () => Promise<T>): Promise<T> {
    const waiting = this.connection.usable();
    return waiting === undefined ? send() : waiting.then(send);
  }

  /** Runs `remote`; if Redis is lost, does what the loss policy says (maybe `local`). */
  guard<T>(operation: string, remote: () => Promise<T>, local: (store: MemoryStore) => Promise<T>): Promise<T> {
    return remote().catch((error: unknown) => this.recover(operation, error, local));
  }

  /** The loss policy applied to a failure of `operation`. */
  recover<T>(operation: string, error: unknown, local: (store: MemoryStore) => Promise<T>): Promise<T> {
    if (SluiceError.is(error)) return Promise.reject(error);
    if (this.connection.state === 'closed') return Promise.reject(storeClosed());
    if (isReplyError(error)) return Promise.reject(commandFailed(operation, error));
    if (this.policy === 'failClosed') {
      return Promise.reject(redisUnavailable(error));
    }
    this.servedLocally++;
    this.remind(operation);
    return local(this.fallback);
  }

  /** Redis was lost (or never reached): say so, loudly. */
  lost(reason: string, atStart: boolean): void {
    const fields = { where: this.connection.where, reason, atStart, policy: this.policy };
    if (this.policy === 'failOpen') {
      this.lastReminder = Date.now();
      this.logger.error(
        { event: 'store.redis.fail_open', ...fields },
        'Redis is unavailable: serving limits, locks and values from this replica alone until it is back (fail open)',
      );
      return;
    }
    this.logger.error(
      { event: 'store.redis.lost', ...fields },
      'Redis is unavailable: guarded calls fail until it is back (fail closed)',
    );
  }

  /** Redis is back: later calls use it again; what ran locally is not carried over. */
  recovered(downMs: number): void {
    this.logger.warn(
      { event: 'store.redis.recovered', where: this.connection.where, downMs, servedLocally: this.servedLocally },
      'Redis is reachable again',
    );
    this.servedLocally = 0;
  }

  private remind(operation: string): void {
    const now = Date.now();
    if (now - this.lastReminder < FAIL_OPEN_REMINDER_MS) return;
    this.lastReminder = now;
    this.logger.error(
      {
        event: 'store.redis.fail_open',
        where: this.connection.where,
        reason: this.connection.lastError,
        operation,
        servedLocally: this.servedLocally,
        policy: this.policy,
      },
      'Redis is unavailable: serving from this replica alone (fail open)',
    );
  }
}
