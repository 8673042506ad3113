import type { Admission, Logger, Semaphore, SemaphoreOptions } from '@sluice/core';
import type { Backend } from './backend.js';
import { storeClosed } from './errors.js';
import type { SemaphoreKeys } from './keys.js';
import type { LeaseOwner } from './lease.js';
import { LeasedPermit } from './lease.js';
import { Scripts } from './scripts.js';
import type { Wakeups } from './wakeups.js';
import { Waiter } from './waiter.js';
import type { WaiterOwner } from './waiter.js';

const ADMITTED = 0;
const QUEUED = 1;
const GONE_OR_SHED = 2;

/** What a semaphore needs from its store. */
export interface SemaphoreHost {
  readonly backend: Backend;
  readonly wakeups: Wakeups;
  readonly logger: Logger;
  readonly defaultLeaseMs: number;
  nextId(): string;
  idle(semaphore: RedisSemaphore): void;
}

/** Redis takes -1 for "no limit". */
function limit(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.floor(n)) : -1;
}

/** How often waiters renew their place and look again, in case a wake-up was lost. */
export function recheckEvery(leaseMs: number): number {
  return Math.min(1_000, Math.max(50, Math.floor(leaseMs / 4)));
}

/**
 * A counting semaphore shared by every replica through Redis: leases in a
 * sorted set, a FIFO queue of waiters with heartbeats, one script per
 * acquire and per release. Waiters sleep until a release publishes on the
 * key's channel (or a periodic re-check finds a slot, in case a wake-up was
 * lost or a dead replica's lease ran out).
 */
export class RedisSemaphore implements Semaphore, LeaseOwner, WaiterOwner {
  /** Leases this process holds in Redis. */
  active = 0;
  private readonly waiters = new Map<string, Waiter>();
  private readonly permits = new Set<LeasedPermit>();
  private pending = 0;
  private polling = false;
  private pollAgain = false;
  private subscription: Promise<void> | undefined;
  /** Whether Redis confirmed the subscription: a release published from then on reaches us. */
  private subscribed = false;
  private recheck: NodeJS.Timeout | undefined;
  private readonly wake = (): void => this.poll();
  private readonly tick = (): void => {
    if (this.subscription === undefined) this.startWaiting();
    this.poll();
  };

  constructor(
    readonly key: string,
    private options: SemaphoreOptions,
    private readonly keys: SemaphoreKeys,
    private readonly host: SemaphoreHost,
  ) {}

  /** Calls of this process waiting in the cluster-wide queue. */
  get queued(): number {
    return this.waiters.size;
  }

  /** Later calls may change the limits; waiting calls keep their places. */
  configure(options: SemaphoreOptions): void {
    this.options = options;
  }

  /** Always `undefined`: a slot in Redis is never free without a round trip. */
  tryAcquire(): undefined {
    return undefined;
  }

  async acquire(signal?: AbortSignal): Promise<Admission> {
    // An aborted call rejects with its signal's reason, whatever the caller made it.
    signal?.throwIfAborted();
    const waiter = new Waiter(this, this.host.nextId(), signal, this.leaseMs());
    this.enter(waiter);
    return waiter.promise;
  }

  /** An aborted waiter leaves the cluster-wide queue at once. */
  abandon(waiter: Waiter): void {
    if (waiter.done) return;
    waiter.fail(waiter.signal?.reason);
    if (this.waiters.delete(waiter.id) && this.waiters.size === 0) this.stopWaiting();
    void this.leave(waiter.id); // leave() never rejects: it logs a failed release
    this.collectIfIdle();
  }

  refreshLease(permit: LeasedPermit): Promise<boolean> {
    return this.host.backend
      .run(Scripts.refresh, [this.keys.leases], [permit.id, permit.leaseMs])
      .then((kept) => kept === 1);
  }

  releaseLease(permit: LeasedPermit): void {
    if (!this.permits.delete(permit)) return;
    this.active--;
    // Redis says whether the lease was still there: if not, the call outlived it.
    void this.leave(permit.id).then((held) => {
      if (held === 0) this.leaseLost(permit);
    });
    this.collectIfIdle();
  }

  leaseLost(permit: LeasedPermit): void {
    if (permit.lost) return;
    permit.lost = true;
    this.host.logger.warn(
      { event: 'store.redis.lease_lost', key: this.key, fence: permit.fence, leaseMs: permit.leaseMs },
      'a running call lost its lease (it was not renewed in time); its slot may be held by another call now',
    );
  }

  /** Fails every waiter and gives back every lease (best effort): the store is closing. */
  async shutdown(): Promise<void> {
    const closed = storeClosed();
    for (const waiter of this.waiters.values()) waiter.fail(closed);
    const ids = [...this.waiters.keys()];
    this.waiters.clear();
    this.stopWaiting();
    // Calls still running when the store closes are being cut off: free their slots now, not at the TTL.
    const releases = [...this.permits].map((permit) => {
      this.permits.delete(permit);
      this.active--;
      permit.release();
      return this.leave(permit.id);
    });
    await Promise.allSettled([...releases, ...ids.map((id) => this.leave(id))]);
  }

  private leaseMs(): number {
    return Math.max(10, Math.ceil(this.options.leaseMs ?? this.host.defaultLeaseMs));
  }

  /** One round trip: admitted, queued, or shed. */
  private enter(waiter: Waiter): void {
    this.pending++;
    const confirmed = this.subscribed;
    const { maxActive, maxQueue } = this.options;
    this.host.backend
      .run(Scripts.acquire, this.keys.all, [waiter.id, limit(maxActive), limit(maxQueue), waiter.leaseMs])
      .then(
        (reply) => this.entered(waiter, reply as number[], confirmed),
        (error: unknown) => this.lose([waiter], error),
      )
      .finally(() => {
        this.pending--;
        this.collectIfIdle();
      });
  }

  private entered(waiter: Waiter, [status, fence, active, queued]: number[], confirmed: boolean): void {
    if (waiter.done) {
      if (status !== GONE_OR_SHED) void this.leave(waiter.id); // never rejects
      return;
    }
    if (status === ADMITTED) {
      this.admit(waiter, fence ?? 0);
      return;
    }
    if (status === GONE_OR_SHED) {
      waiter.settle({ admitted: false, active: active ?? 0, queued: queued ?? 0 });
      return;
    }
    this.waiters.set(waiter.id, waiter);
    this.startWaiting();
    // Queued before our subscription was confirmed: a release in between went unheard.
    if (!confirmed) this.whenSubscribed();
  }

  private admit(waiter: Waiter, fence: number): void {
    const permit = new LeasedPermit(this, waiter.id, fence, waiter.leaseMs);
    this.permits.add(permit);
    this.active++;
    if (!waiter.settle({ admitted: true, permit })) permit.release();
  }

  private startWaiting(): void {
    if (this.subscription === undefined) {
      const subscription = this.host.wakeups.watch(this.keys.wake, this.wake).then(() => {
        this.subscribed = this.subscription === subscription;
      });
      // A failed subscription is retried at the next re-check, which meanwhile finds free slots itself.
      subscription.catch(() => {
        if (this.subscription === subscription) this.subscription = undefined;
      });
      this.subscription = subscription;
    }
    if (this.recheck === undefined) {
      this.recheck = setInterval(this.tick, recheckEvery(this.leaseMs()));
      this.recheck.unref();
    }
  }

  private whenSubscribed(): void {
    this.subscription?.then(this.wake, () => {});
  }

  private stopWaiting(): void {
    clearInterval(this.recheck);
    this.recheck = undefined;
    if (this.subscription === undefined) return;
    this.subscription = undefined;
    this.subscribed = false;
    this.host.wakeups.unwatch(this.keys.wake, this.wake);
  }

  /** Asks Redis, for every waiter of this process in arrival order, whether its turn came. */
  private poll(): void {
    if (this.waiters.size === 0) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    const ids = [...this.waiters.keys()];
    this.host.backend
      .run(Scripts.poll, this.keys.all, [limit(this.options.maxActive), this.leaseMs(), ...ids])
      .then(
        (reply) => this.polled(ids, reply as number[]),
        (error: unknown) => this.lose(this.takeWaiters(), error),
      )
      .finally(() => {
        this.polling = false;
        if (this.pollAgain) {
          this.pollAgain = false;
          this.poll();
        }
        this.collectIfIdle();
      });
  }

  private polled(ids: readonly string[], reply: readonly number[]): void {
    ids.forEach((id, i) => {
      const status = reply[2 * i];
      const waiter = this.waiters.get(id);
      if (waiter === undefined) {
        // Aborted while the poll was in flight: give back what it was just given.
        if (status === ADMITTED) void this.leave(id); // never rejects
        return;
      }
      if (status === QUEUED) return;
      this.waiters.delete(id);
      // Its queue entry expired (this process stalled) or Redis lost it: stand in line again.
      if (status === ADMITTED) this.admit(waiter, reply[2 * i + 1] ?? 0);
      else this.enter(waiter);
    });
    if (this.waiters.size === 0) this.stopWaiting();
  }

  private takeWaiters(): Waiter[] {
    const taken = [...this.waiters.values()];
    this.waiters.clear();
    this.stopWaiting();
    return taken;
  }

  /** Redis failed these waiters: the loss policy says what they get. */
  private lose(waiters: readonly Waiter[], error: unknown): void {
    for (const waiter of waiters) {
      if (waiter.done) continue;
      this.host.backend
        .recover('semaphore.acquire', error, (local) =>
          Promise.resolve(local.semaphore(this.key, this.options).acquire(waiter.signal)),
        )
        .then(
          (admission) => {
            if (!waiter.settle(admission) && admission.admitted) admission.permit.release();
          },
          (reason: unknown) => waiter.fail(reason),
        );
    }
  }

  /**
   * Removes this id from Redis (lease or queue entry); failures only delay it
   * to its TTL. Never rejects: a failure is logged at debug level.
   */
  private leave(id: string): Promise<unknown> {
    return this.host.backend
      .run(Scripts.release, this.keys.all.slice(0, 3), [id, this.keys.wake])
      .catch((error: unknown) => {
        this.host.logger.debug(
          { event: 'store.redis.release_failed', key: this.key, err: error },
          'release failed; the lease will expire',
        );
      });
  }

  private collectIfIdle(): void {
    if (this.active === 0 && this.waiters.size === 0 && this.pending === 0 && !this.polling) this.host.idle(this);
  }
}
