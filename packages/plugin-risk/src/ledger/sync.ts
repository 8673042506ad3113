import { CoreErrorCode, SluiceError } from '@sluice/core';
import type { Store } from '@sluice/core';
import type { LedgerSharing } from './ledger.js';

const VERSION_KEY = 'dev.sluice/risk/ledger-version';
const LOCK_PREFIX = 'dev.sluice/risk/ledger-lock/';

/**
 * Keeps replicas that share a store (Redis) agreeing on the ledger. Every
 * write takes the upstream's lock in the store, re-reads the record, and
 * bumps one version counter; each replica reads that counter at most once
 * per `intervalMs` while calls arrive and, when it moved, reloads the records
 * and applies holds and approvals made elsewhere. Used only when the store is
 * shared: with the in-memory store none of this exists.
 */
export class LedgerSync implements LedgerSharing {
  private seen: number | undefined;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly intervalMs: number,
    private readonly apply: () => Promise<void>,
  ) {}

  async lock(serverId: string): Promise<() => void> {
    const admission = await this.store.lock(LOCK_PREFIX + serverId).acquire();
    if (!admission.admitted)
      throw new SluiceError(CoreErrorCode.INVALID_STATE, `The ledger lock of upstream "${serverId}" shed a waiter`, {
        plugin: 'risk',
      });
    return () => admission.permit.release();
  }

  async changed(): Promise<void> {
    const version = await this.store.increment(VERSION_KEY);
    // Our own write, with nobody else's in between: nothing new to apply.
    if (this.seen !== undefined && version === this.seen + 1) this.seen = version;
  }

  /** A promise while the view is older than `intervalMs` (every caller then waits for one read); else undefined. */
  due(): Promise<void> | undefined {
    if (this.running !== undefined) return this.running;
    if (this.now() - this.checkedAt < this.intervalMs) return undefined;
    const running = this.refresh().finally(() => {
      this.running = undefined;
    });
    this.running = running;
    return running;
  }

  private async refresh(): Promise<void> {
    const raw = await this.store.get(VERSION_KEY);
    const version = typeof raw === 'number' ? raw : Number(raw ?? 0);
    this.checkedAt = this.now();
    if (version === this.seen) return;
    await this.apply();
    this.seen = version;
  }
}
