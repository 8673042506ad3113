import { createHash } from 'node:crypto';
import { callerKeyOf } from '@sluice/core';
import type { AuditFrom, Clock, ClockTimer, Store } from '@sluice/core';

/** The caller of a call without a verified identity: every unauthenticated caller is this one. */
export const ANONYMOUS_CALLER = 'anonymous';
/** The summary of a window waits this long past its end, for the last counts of other replicas. */
export const SUMMARY_DELAY_MS = 1_000;
const KEY_PREFIX = 'dev.sluice/audit/per-caller/';

/** One caller's share of the log: at most `maxEntries` entries per `windowMs`. */
export interface CallerBudgetLimits {
  readonly maxEntries: number;
  readonly windowMs: number;
}

/** What a window left out of one caller's entries, for the one entry that says so. */
export interface Suppressed {
  /** The caller's key (`apiKey:<name>`, `oauth:<subject>`, ..., or `anonymous`). */
  readonly caller: string;
  readonly count: number;
  /** When the window began (epoch ms). */
  readonly since: number;
}

/** A clock whose timers are optional: without them the summary waits on the process's own timer. */
export type BudgetClock = Pick<Clock, 'now'> & Partial<Pick<Clock, 'setTimeout'>>;

/**
 * Each caller's budget of audit entries: a counter per caller and window in
 * the store (shared by every replica on Redis), so that one caller asking
 * and answering questions in turn cannot push every other caller's entries
 * out of a log of bounded size. Past the budget an entry is left out; the
 * one append that finds the budget just spent (one in the fleet: the counter
 * is atomic) schedules the window's summary, which reads the final count
 * once the window has ended.
 */
export class CallerBudget {
  constructor(
    private readonly counts: Pick<Store, 'increment' | 'get'>,
    private readonly clock: BudgetClock,
    private readonly limits: CallerBudgetLimits,
    private readonly summarize: (suppressed: Suppressed) => Promise<unknown>,
  ) {}

  /** Whether an entry about this call fits in its caller's budget now; counted either way. */
  async admit(from: AuditFrom): Promise<boolean> {
    const caller = callerKeyOf(from.authInfo) ?? ANONYMOUS_CALLER;
    const { maxEntries, windowMs } = this.limits;
    const window = Math.floor(this.clock.now() / windowMs);
    const key = `${KEY_PREFIX}${windowMs}/${digest(caller)}/${window}`;
    // Outlives its window by one more, so that the summary still reads it.
    const count = await this.counts.increment(key, 1, { ttlMs: 2 * windowMs });
    if (count === maxEntries + 1) this.schedule(caller, key, window * windowMs);
    return count <= maxEntries;
  }

  private schedule(caller: string, key: string, since: number): void {
    const delay = since + this.limits.windowMs + SUMMARY_DELAY_MS - this.clock.now();
    // The summary's own append logs its failures; nothing else here can fail.
    const report = () => void this.report(caller, key, since).catch(() => undefined);
    const timer: ClockTimer = this.clock.setTimeout?.(report, delay) ?? setTimeout(report, delay);
    // A summary never keeps a process alive: one that stops first loses it.
    timer.unref?.();
  }

  private async report(caller: string, key: string, since: number): Promise<void> {
    const counted = await this.counts.get<number>(key).catch(() => undefined);
    const total = typeof counted === 'number' ? counted : this.limits.maxEntries + 1;
    await this.summarize({ caller, count: total - this.limits.maxEntries, since });
  }
}

/** The store's name for a caller: a digest, whatever the caller's key is made of. */
function digest(caller: string): string {
  return createHash('sha256').update(caller, 'utf8').digest('base64url');
}
