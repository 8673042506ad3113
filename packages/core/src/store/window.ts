import type { Store, WindowCount } from './types.js';

/**
 * `incrementWindow`'s arguments, checked before a store writes anything: a
 * window of some milliseconds, and a whole, non-negative step.
 */
export function checkWindow(windowMs: number, by: number): void {
  if (!(Number.isFinite(windowMs) && windowMs > 0))
    throw new RangeError(`windowMs must be a finite number of milliseconds > 0, not ${String(windowMs)}`);
  if (!(Number.isSafeInteger(by) && by >= 0)) throw new RangeError(`by must be a whole number >= 0, not ${String(by)}`);
}

/**
 * Adds `by` (0 only reads) to the count of `key`'s fixed window of
 * `windowMs`, and tells the ms the window has left: through
 * `store.incrementWindow`, timed by the store, where it has it (processes
 * whose clocks disagree then count one window); otherwise in windows
 * numbered from the epoch by `now`, each counter kept two windows long.
 */
export async function countInWindow(
  store: Store,
  key: string,
  windowMs: number,
  by = 1,
  now = Date.now(),
): Promise<WindowCount> {
  if (store.incrementWindow !== undefined) return await store.incrementWindow(key, windowMs, by);
  checkWindow(windowMs, by);
  const window = Math.floor(now / windowMs);
  const numbered = `${key}/${window}`;
  const count =
    by === 0
      ? ((await store.get<number>(numbered)) ?? 0)
      : await store.increment(numbered, by, { ttlMs: windowMs * 2 });
  return { count, resetMs: Math.max(1, (window + 1) * windowMs - now) };
}
