import type { Admission } from '@sluice/core';

/** What a waiter tells its semaphore when its signal fires. */
export interface WaiterOwner {
  abandon(waiter: Waiter): void;
}

/**
 * One call asking for a slot. It is its own abort listener, and it settles
 * once: whatever arrives after (a late admission, a second failure) is
 * ignored by the waiter and cleaned up by its semaphore.
 */
export class Waiter {
  done = false;
  readonly promise: Promise<Admission>;
  private resolve!: (admission: Admission) => void;
  private reject!: (reason: unknown) => void;

  constructor(
    private readonly owner: WaiterOwner,
    readonly id: string,
    readonly signal: AbortSignal | undefined,
    /** The lease length the call asked for, fixed when it arrived. */
    readonly leaseMs: number,
  ) {
    this.promise = new Promise<Admission>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    signal?.addEventListener('abort', this, { once: true });
  }

  handleEvent(): void {
    this.owner.abandon(this);
  }

  /** False if the waiter had already settled (so the caller must undo what it got). */
  settle(admission: Admission | Promise<Admission>): boolean {
    if (!this.finish()) return false;
    this.resolve(admission as Admission);
    return true;
  }

  fail(reason: unknown): void {
    if (this.finish()) this.reject(reason);
  }

  private finish(): boolean {
    if (this.done) return false;
    this.done = true;
    this.signal?.removeEventListener('abort', this);
    return true;
  }
}
