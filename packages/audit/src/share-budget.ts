import { createHash } from 'node:crypto';
import type { Clock, ClockTimer, Store } from '@sluice/core';

/** The caller of a call without a verified identity: every unauthenticated caller is this one. */
export const ANONYMOUS_CALLER = 'anonymous';
/** The summary of a window waits this long past its end, for the last counts of other replicas. */
export const SUMMARY_DELAY_MS = 1_000;

/** Whose share an entry counts against: the caller of the call it is about, or the upstream that caused it. */
export type ShareKind = 'caller' | 'upstream';

/** One share of the log: at most `maxEntries` entries per `windowMs`. */
export interface ShareLimits {
  readonly maxEntries: number;
  readonly windowMs: number;
}

/** What a window left out of one share's entries, for the one entry that says so. */
export interface Suppressed {
  /** The caller's key (`apiKey:<name>`, `oauth:<subject>`, ..., or `anonymous`), or the upstream's name. */
  readonly share: string;
  readonly count: number;
  /** When the window began (epoch ms). */
  readonly since: number;
}

/** A clock whose timers are optional: without them the summary waits on the process's own timer. */
export type BudgetClock = Pick<Clock, 'now'> & Partial<Pick<Clock, 'setTimeout'>>;

/**
 * Shares of the audit log, each a budget of entries: a counter per share
 * and window in the store (shared by every replica on Redis), so that one
 * caller asking and answering questions in turn, or one upstream redefining
 * its tools on a timer, cannot push every other entry out of a log of
 * bounded size. Past the budget an entry is left out; the one append that
 * finds the budget just spent (one in the fleet: the counter is atomic)
 * schedules the window's summary, which reads the final count once the
 * window has ended.
 */
export class ShareBudget {
  private readonly prefix: string;

  constructor(
    kind: ShareKind,
    private readonly counts: Pick<Store, 'increment' | 'get'>,
    private readonly clock: BudgetClock,
    readonly limits: ShareLimits,
    private readonly summarize: (suppressed: Suppressed) => Promise<unknown>,
  ) {
    this.prefix = `dev.sluice/audit/per-${kind}/`;
  }

  /** Whether one more entry fits in this share now; counted either way. */
  async admit(share: string): Promise<boolean> {
    const { maxEntries, windowMs } = this.limits;
    const window = Math.floor(this.clock.now() / windowMs);
    const key = `${this.prefix}${windowMs}/${digest(share)}/${window}`;
    // Outlives its window by one more, so that the summary still reads it.
    const count = await this.counts.increment(key, 1, { ttlMs: 2 * windowMs });
    if (count === maxEntries + 1) this.schedule(share, key, window * windowMs);
    return count <= maxEntries;
  }

  private schedule(share: string, key: string, since: number): void {
    const delay = since + this.limits.windowMs + SUMMARY_DELAY_MS - this.clock.now();
    // The summary's own append logs its failures; nothing else here can fail.
    const report = () => void this.report(share, key, since).catch(() => undefined);
    const timer: ClockTimer = this.clock.setTimeout?.(report, delay) ?? setTimeout(report, delay);
    // A summary never keeps a process alive: one that stops first loses it.
    timer.unref?.();
  }

  private async report(share: string, key: string, since: number): Promise<void> {
    const counted = await this.counts.get<number>(key).catch(() => undefined);
    const total = typeof counted === 'number' ? counted : this.limits.maxEntries + 1;
    await this.summarize({ share, count: total - this.limits.maxEntries, since });
  }
}

/** The store's name for a share: a digest, whatever the caller's key or the upstream's name is made of. */
function digest(share: string): string {
  return createHash('sha256').update(share, 'utf8').digest('base64url');
}
