/** The per-tool settings this plugin reads from a local tool's `policy`. */

export interface ConcurrencyPolicy {
  /** Calls that may run at once (>= 1). */
  readonly maxActive: number;
  /** Calls that may wait for a slot (>= 0, default 0). Beyond that, calls are shed. */
  readonly maxQueue?: number;
  /** `'caller'`: each verified caller gets its own slots. Default `'tool'`: one set for everyone. */
  readonly per?: 'tool' | 'caller';
  /** At most `calls` calls per `perMs` window (per caller when `per` is `'caller'`). */
  readonly rate?: { readonly calls: number; readonly perMs: number };
}

export interface MutexPolicy {
  /** Argument fields that make up the lock key, e.g. `['invoiceId']`. Default: one lock for the tool. */
  readonly keyArgs?: readonly string[];
}

declare module '@sluice/core' {
  interface ToolPolicy {
    /** Concurrency limit of this tool (plugin-concurrency). */
    concurrency?: ConcurrencyPolicy;
    /** How plugin-concurrency keys the intent mutex of this tool. */
    mutex?: MutexPolicy;
  }
}
