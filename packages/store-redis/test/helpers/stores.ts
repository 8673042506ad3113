import { captureLogger } from '@sluice/testing';
import type { CapturedLogger } from '@sluice/testing';
import type { Redis } from 'ioredis';
import { redisStore } from '../../src/index.js';
import type { RedisStore, RedisStoreOptions } from '../../src/index.js';
import type { RedisServer } from './redis-server.js';

let counter = 0;

/** A key prefix no other test uses, so tests share one Redis without seeing each other. */
export function uniquePrefix(): string {
  return `t${process.pid}-${++counter}:`;
}

export interface TestStore {
  readonly store: RedisStore;
  readonly logs: CapturedLogger;
}

/** Makes stores on one Redis, all under one prefix (as replicas would), and closes them together. */
export class StoreFactory {
  readonly prefix = uniquePrefix();
  private readonly stores: RedisStore[] = [];

  constructor(private readonly redis: RedisServer) {}

  open(options: RedisStoreOptions = {}): TestStore {
    const logs = captureLogger();
    // The test's Redis is up: a first connection slower than the default 5 s means a starved machine, not a fault.
    const store = redisStore(
      { url: this.redis.url },
      { keyPrefix: this.prefix, logger: logs.logger, connectTimeoutMs: 30_000, ...options },
    );
    this.stores.push(store);
    return { store, logs };
  }

  /** The Redis key a semaphore part lives at. */
  key(semaphore: string, part: 'leases' | 'queue' | 'queue-expiry' | 'fence'): string {
    return `${this.prefix}sem:{${semaphore}}:${part}`;
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled(this.stores.splice(0).map((store) => store.close()));
  }
}

/** Redis server time in ms, as the scripts see it. */
export async function redisTime(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Waits until `check` holds, looking every few ms; fails with `what` if it never does. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
