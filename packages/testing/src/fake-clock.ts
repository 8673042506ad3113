import type { Clock, ClockTimer } from '@sluice/core';

interface Scheduled extends ClockTimer {
  at: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to: `advance(ms)` runs what falls due, in order. */
export class FakeClock implements Clock {
  private time: number;
  private timers: Scheduled[] = [];

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer: Scheduled = { at: this.time + Math.max(0, ms), fn, cancelled: false, unref: () => timer };
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(timer: ClockTimer): void {
    (timer as Scheduled).cancelled = true;
  }

  /** Moves time forward, running each timer that falls due at its own time. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.time = due.at;
      due.cancelled = true;
      due.fn();
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.time = target;
  }

  /** Timers still waiting. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
