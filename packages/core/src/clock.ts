/** Time as the plugins see it; the test kit swaps in a fake one. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

/** An opaque timer handle returned by `Clock.setTimeout`. */
export interface ClockTimer {
  unref?(): unknown;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (fn: () => void, ms: number): ClockTimer => setTimeout(fn, ms),
  clearTimeout: (timer: ClockTimer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
});
