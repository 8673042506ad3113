/**
 * How far a caller that was idle may run ahead of its share: what the share
 * earns in this long (1 s of CPU at the default quarter of a core). Past it,
 * the caller's running scripts are slowed to the share.
 */
export const CPU_BANK_MS = 4_000;
/** Callers whose account is full again are forgotten at most this often, once there are `SWEEP_ABOVE` of them. */
const SWEEP_EVERY_MS = 1_000;
const SWEEP_ABOVE = 1_000;

interface Account {
  /** CPU ms the caller may still spend; below zero, what it owes. */
  balance: number;
  /** When `balance` was last brought up to date. */
  at: number;
}

/**
 * Each caller's share of the CPU that scripts use: an account that earns
 * `share` ms of CPU per ms of wall time up to a bank of `share * CPU_BANK_MS`,
 * and is charged what its scripts cost as they run. A caller in debt starts
 * no script until the debt is paid, and its running scripts wait for it (see
 * `owed`), so that over any stretch of time a caller's scripts use at most
 * its share plus the bank (and what one check interval lets a script run
 * past it).
 */
export class CpuShares {
  private readonly accounts = new Map<string, Account>();
  private readonly bank: number;
  private chargedMs = 0;
  private refusedCount = 0;
  private sweptAt = 0;

  /** `share`: the fraction of one core per caller; `now`: a monotonic clock in ms. */
  constructor(
    readonly share: number,
    private readonly now: () => number,
  ) {
    this.bank = share * CPU_BANK_MS;
  }

  /** Wall ms until `caller` has paid what it owes (0: it owes nothing and may start a script). */
  owed(caller: string): number {
    const account = this.accounts.get(caller);
    if (account === undefined) return 0;
    const balance = this.update(account);
    return balance >= 0 ? 0 : -balance / this.share;
  }

  /** Refuses `caller` a script if it owes CPU: the wall ms until it has paid, or undefined when it may start one. */
  admit(caller: string): number | undefined {
    const owed = this.owed(caller);
    if (owed === 0) return undefined;
    this.refusedCount++;
    return owed;
  }

  /** Charges `caller` `ms` of CPU its scripts used; answers what it owes now, as `owed` does. */
  charge(caller: string, ms: number): number {
    if (!(ms > 0)) return this.owed(caller);
    this.chargedMs += ms;
    let account = this.accounts.get(caller);
    if (account === undefined) {
      this.sweep();
      account = { balance: this.bank, at: this.now() };
      this.accounts.set(caller, account);
    }
    account.balance = this.update(account) - ms;
    return account.balance >= 0 ? 0 : -account.balance / this.share;
  }

  /** CPU ms charged to every caller so far, and the scripts refused because their caller owed CPU. */
  usage(): { readonly chargedMs: number; readonly refused: number } {
    return { chargedMs: this.chargedMs, refused: this.refusedCount };
  }

  private update(account: Account): number {
    const now = this.now();
    account.balance = Math.min(this.bank, account.balance + (now - account.at) * this.share);
    account.at = now;
    return account.balance;
  }

  /** Forgets the callers whose account is full again: they are as if they had never run a script. */
  private sweep(): void {
    if (this.accounts.size < SWEEP_ABOVE) return;
    const now = this.now();
    if (now - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    for (const [caller, account] of this.accounts) if (this.update(account) >= this.bank) this.accounts.delete(caller);
  }
}
