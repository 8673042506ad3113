/** The Redis keys and channel of one semaphore. */
export interface SemaphoreKeys {
  /** Sorted set: lease id -> expiry (Redis server time, ms). */
  readonly leases: string;
  /** Sorted set: waiter id -> arrival order. */
  readonly queue: string;
  /** Sorted set: waiter id -> heartbeat expiry (Redis server time, ms). */
  readonly queueExpiry: string;
  /** Counter behind the fencing tokens: never expires, and starts at Redis time in µs, so tokens only grow. */
  readonly fence: string;
  /** Pub/sub channel on which a release wakes the waiters. */
  readonly wake: string;
  /** The four keys, in the order every script takes them. */
  readonly all: readonly [string, string, string, string];
}

/**
 * Names every key under one prefix. A semaphore's keys share a `{hash tag}`,
 * so that on a Redis Cluster they live in one slot and one script may touch
 * them all.
 */
export class KeySpace {
  constructor(private readonly prefix: string) {}

  semaphore(key: string): SemaphoreKeys {
    const base = `${this.prefix}sem:{${key}}`;
    const leases = `${base}:leases`;
    const queue = `${base}:queue`;
    const queueExpiry = `${base}:queue-expiry`;
    const fence = `${base}:fence`;
    return { leases, queue, queueExpiry, fence, wake: `${base}:wake`, all: [leases, queue, queueExpiry, fence] };
  }

  value(key: string): string {
    return `${this.prefix}kv:${key}`;
  }
}
