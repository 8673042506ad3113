import type { Store } from '@sluice/core';

/**
 * A journal is counted in the slice of time it was kept in, slices being a
 * quarter of `journal.ttlMs` wide; a share is the sum of the last
 * `SLICES_PER_TTL + 1` slices. Every live journal is in them (it lapses
 * within `ttlMs` of being kept), and one that lapsed stops counting at most a
 * slice later, when its slice leaves the window.
 */
export const SLICES_PER_TTL = 4;
const KEY_PREFIX = 'dev.sluice/code-mode/paused/';

/** The bounds on live journals (`journal.*` options). */
export interface PausedLimits {
  readonly maxPausedScripts: number;
  readonly maxPausedPerCaller: number;
  readonly maxTotalBytes: number;
  readonly maxBytesPerCaller: number;
}

export type PausedShare = 'caller' | 'server';
export type PausedLimit = 'scripts' | 'bytes';

/** Where a kept journal is counted; `release` takes it back out. */
export interface PausedSlot {
  /** The slice the journal was kept in. */
  readonly slice: number;
  /** The slices' width when it was kept, in ms (part of the counters' keys). */
  readonly width: number;
}

/** Why a journal could not be kept: which share is full, by which measure. */
export interface PauseRefusal {
  readonly share: PausedShare;
  readonly limit: PausedLimit;
  readonly max: number;
  /** What the share holds without this journal: paused scripts, or bytes. */
  readonly held: number;
  /** This journal's bytes. */
  readonly bytes: number;
  /** Ms until the oldest journal counted in the share stops counting; absent when this journal alone is past the share. */
  readonly retryAfterMs?: number;
}

/** Pauses refused so far, by the share that was full (this process's refusals). */
export interface PauseRefusals {
  caller: number;
  server: number;
}

interface Counter {
  readonly share: PausedShare;
  readonly limit: PausedLimit;
  readonly scope: string;
  readonly by: number;
  readonly max: number;
}

/**
 * The shares of live journals (paused scripts): at most `maxPausedScripts`
 * and `maxTotalBytes` on the server, of which one caller holds at most
 * `maxPausedPerCaller` and `maxBytesPerCaller`. The counts are kept
 * in the server's store, so that they hold over every replica sharing it (on
 * the in-memory store, in this process); each is a counter per slice of time
 * that expires with its slice, so that nothing needs to see a journal lapse
 * for it to stop counting, and a replica that stops mid-way leaves no count
 * behind for long.
 *
 * A journal is counted in before it is kept: the counters are incremented,
 * then the window is read; past a bound the increments are taken back and the
 * script cannot pause. Whichever of two concurrent pauses incremented last
 * sees the other, so together they never pass a bound. A journal taken out
 * of the store to resume is counted out at once.
 */
export class PausedShares {
  readonly width: number;

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    ttlMs: number,
    private readonly limits: PausedLimits,
    private readonly refusals: PauseRefusals,
  ) {
    this.width = Math.ceil(ttlMs / SLICES_PER_TTL);
  }

  /** Counts a journal of `bytes` in for `caller`, or says which share it does not fit in (nothing is then counted). */
  async admit(caller: string, bytes: number): Promise<PausedSlot | PauseRefusal> {
    const now = this.now();
    const slice = Math.floor(now / this.width);
    const counters = this.counters(caller, bytes);
    const ttlMs = this.keyTtl(this.width);
    const current = await Promise.all(
      counters.map((c) => this.store.increment(this.key(this.width, c, slice), c.by, { ttlMs })),
    );
    const older = await Promise.all(
      counters.map((c) =>
        Promise.all(
          Array.from({ length: SLICES_PER_TTL }, (_, i) => this.store.get(this.key(this.width, c, slice - 1 - i))),
        ),
      ),
    );
    for (const [n, counter] of counters.entries()) {
      // Oldest first; a slice whose key lapsed and came back from a late release counts as empty.
      const slices = [...(older[n] ?? []).map(countOf).reverse(), countOf(current[n])];
      const total = slices.reduce((sum, count) => sum + count, 0);
      if (total <= counter.max) continue;
      await Promise.all(counters.map((c) => this.store.increment(this.key(this.width, c, slice), -c.by, { ttlMs })));
      this.refusals[counter.share]++;
      // Slice `slice - SLICES_PER_TTL + i` leaves the window when slice `slice + i + 1` begins.
      const oldest = slices.findIndex((count) => count > 0);
      const leaves = (slice + oldest + 1) * this.width;
      return {
        share: counter.share,
        limit: counter.limit,
        max: counter.max,
        held: total - counter.by,
        bytes,
        ...(counter.by > counter.max ? {} : { retryAfterMs: Math.max(1, Math.ceil(leaves - now)) }),
      };
    }
    return { slice, width: this.width };
  }

  /** Counts out a journal that was taken out of the store, unless it has stopped counting already. */
  async release(caller: string, slot: PausedSlot, bytes: number): Promise<void> {
    if (!(slot.width > 0) || !Number.isSafeInteger(slot.slice)) return;
    if (slot.slice < Math.floor(this.now() / slot.width) - SLICES_PER_TTL) return;
    const ttlMs = this.keyTtl(slot.width);
    await Promise.all(
      this.counters(caller, bytes).map((c) =>
        this.store.increment(this.key(slot.width, c, slot.slice), -c.by, { ttlMs }),
      ),
    );
  }

  private counters(caller: string, bytes: number): Counter[] {
    const l = this.limits;
    return [
      { share: 'caller', limit: 'scripts', scope: caller, by: 1, max: l.maxPausedPerCaller },
      { share: 'caller', limit: 'bytes', scope: caller, by: bytes, max: l.maxBytesPerCaller },
      { share: 'server', limit: 'scripts', scope: '*', by: 1, max: l.maxPausedScripts },
      { share: 'server', limit: 'bytes', scope: '*', by: bytes, max: l.maxTotalBytes },
    ];
  }

  private key(width: number, counter: Counter, slice: number): string {
    return `${KEY_PREFIX}${width}/${counter.scope}/${slice}/${counter.limit}`;
  }

  /** A slice's counters outlive the window they are read in by a slice (replicas' clocks differ a little). */
  private keyTtl(width: number): number {
    return width * (SLICES_PER_TTL + 2);
  }
}

/** A counter as stored: a number, or nothing; below zero (a late release into a lapsed key) it holds nothing. */
function countOf(value: unknown): number {
  return typeof value === 'number' && value > 0 ? value : 0;
}
