/** Client addresses whose failures are counted at once; beyond, the oldest count is forgotten. */
export const MAX_THROTTLED_ADDRESSES = 4_096;

export interface ThrottleLimits {
  readonly maxFailures: number;
  readonly windowMs: number;
}

interface Count {
  failures: number;
  /** When the window that counts them ends. */
  until: number;
}

/**
 * Failed console logins by client address, in fixed windows: once an address
 * failed `maxFailures` times, it is refused until its window ends, whatever
 * it sends. A success clears its count. Bounded in addresses.
 */
export class LoginThrottle {
  private readonly counts = new Map<string, Count>();

  constructor(
    private readonly limits: ThrottleLimits,
    private readonly now: () => number = Date.now,
    private readonly maxAddresses = MAX_THROTTLED_ADDRESSES,
  ) {}

  /** Milliseconds the address must wait before it may try again; 0 when it may try now. */
  waitMs(address: string): number {
    const count = this.current(address);
    return count !== undefined && count.failures >= this.limits.maxFailures ? count.until - this.now() : 0;
  }

  fail(address: string): void {
    const count = this.current(address);
    if (count !== undefined) {
      count.failures++;
      return;
    }
    while (this.counts.size >= this.maxAddresses) {
      const oldest = this.counts.keys().next().value;
      if (oldest === undefined) break;
      this.counts.delete(oldest);
    }
    this.counts.set(address, { failures: 1, until: this.now() + this.limits.windowMs });
  }

  succeed(address: string): void {
    this.counts.delete(address);
  }

  private current(address: string): Count | undefined {
    const count = this.counts.get(address);
    if (count === undefined) return undefined;
    if (this.now() < count.until) return count;
    this.counts.delete(address);
    return undefined;
  }
}
