/**
 * Named stages order the taps of one hook. Lower stages run first. For the
 * `execute` hook, taps are applied in stage order and each wraps what the
 * earlier ones built, so the highest stage is the outermost wrapper: it sees
 * a call first and its result last.
 */
export const Stage = Object.freeze({
  /** Before everything else. */
  FIRST: -10_000,
  /** Request filtering: auth scopes, include/exclude headers. */
  FILTER: -400,
  /** Loop detection across services. */
  LOOP: -300,
  /** Risk gates and re-review holds. */
  RISK: -200,
  /** Human approval. */
  APPROVAL: -100,
  /** Plugins with no particular place. */
  DEFAULT: 0,
  /** Admission control (concurrency, mutex). Outermost on `execute`. */
  THROTTLE: 100,
  /** Result rewriting: truncation, redaction. */
  TRANSFORM: 200,
  /** Following `nextTool`, after the result is final. */
  CHAIN: 300,
  /** Observers that must see what every other plugin did. */
  LAST: 10_000,
} as const);

export type StageName = keyof typeof Stage;
