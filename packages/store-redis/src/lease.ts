import type { Permit } from '@sluice/core';

/** What a leased permit needs from its semaphore. */
export interface LeaseOwner {
  refreshLease(permit: LeasedPermit): Promise<boolean>;
  releaseLease(permit: LeasedPermit): void;
  leaseLost(permit: LeasedPermit): void;
}

/** The share of the lease after which a running call renews it. */
export const REFRESH_AT = 0.8;
/** After a failed renewal (Redis away), try again this soon, as a share of the lease. */
const RETRY_AT = 0.1;

/**
 * A slot held in Redis. While the call runs, a timer renews the lease at 0.8
 * of its length; the timer never keeps the process alive and stops on
 * release. A lease found expired is not revived: another call may hold the
 * slot by then, and the fencing token is what protects the resource.
 */
export class LeasedPermit implements Permit {
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  /** Set once the loss was reported, so that it is reported once. */
  lost = false;

  constructor(
    private readonly owner: LeaseOwner,
    readonly id: string,
    readonly fence: number,
    readonly leaseMs: number,
  ) {
    this.arm(leaseMs * REFRESH_AT);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    clearTimeout(this.timer);
    this.owner.releaseLease(this);
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.renew(), ms);
    this.timer.unref();
  }

  private renew(): void {
    this.owner.refreshLease(this).then(
      (kept) => {
        // A loss is reported even if the call ended meanwhile: it ran without its slot.
        if (!kept) this.owner.leaseLost(this);
        else if (!this.released) this.arm(this.leaseMs * REFRESH_AT);
      },
      () => {
        if (!this.released) this.arm(this.leaseMs * RETRY_AT);
      },
    );
  }
}
