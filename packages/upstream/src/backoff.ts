/** How long to wait before reconnecting. */
export interface BackoffPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * The delay before reconnection attempt `attempt` (0 for the first): the
 * ceiling doubles per attempt up to `maxDelayMs`, and the delay is drawn
 * from the upper half of it, so that many Sluice replicas that lost the same
 * upstream do not all knock at once.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt, 0), 30);
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
