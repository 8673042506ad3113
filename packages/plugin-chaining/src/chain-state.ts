import type { ChainKey } from './chain-key.js';
import { chainKey } from './chain-key.js';
import type { ChainRecord, ChainStep } from './chain-record.js';

/** A call of the chain, for cycle detection; its canonical key is computed only if another call uses the same tool. */
interface MadeCall {
  readonly tool: string;
  readonly args: unknown;
  key?: ChainKey;
}

export type CycleCheck =
  { readonly kind: 'new' } | { readonly kind: 'repeat' } | { readonly kind: 'unusable'; readonly message: string };

const NEW: CycleCheck = Object.freeze({ kind: 'new' });
const REPEAT: CycleCheck = Object.freeze({ kind: 'repeat' });

/**
 * What one chain has done so far: its steps, and the calls (tool and
 * arguments) it has made, for cycle detection. A chain started inside a
 * step of another chain (a step's handler calling `ctx.call()`) continues
 * that chain's depth and cycle bookkeeping, so nesting cannot escape either.
 */
export class ChainState {
  readonly steps: ChainStep[] = [];
  // A list, not a map: a chain holds a handful of calls.
  private readonly calls: MadeCall[];
  private readonly offset: number;

  constructor(
    readonly origin: string,
    originArgs: unknown,
    readonly maxDepth: number,
    private readonly enclosing?: ChainState,
  ) {
    // The enclosing chain's running step counts: it has not been recorded yet.
    this.offset = enclosing ? enclosing.depth + 1 : 0;
    this.calls = [{ tool: origin, args: originArgs }];
  }

  /** Chained calls made so far, counting those of enclosing chains. */
  get depth(): number {
    return this.offset + this.steps.length;
  }

  get full(): boolean {
    return this.depth >= this.maxDepth;
  }

  /**
   * Whether this chain (or an enclosing one) already made this call. Most
   * chains never repeat a tool, so arguments are only serialized when one does.
   */
  check(tool: string, args: unknown): CycleCheck {
    let key: ChainKey | undefined;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- walks from this chain out through the ones enclosing it
    for (let state: ChainState | undefined = this; state; state = state.enclosing) {
      for (const call of state.calls) {
        if (call.tool !== tool) continue;
        key ??= chainKey(tool, args);
        if (!key.ok) return { kind: 'unusable', message: key.message };
        call.key ??= chainKey(tool, call.args);
        if (call.key.ok && call.key.key === key.key) return REPEAT;
      }
    }
    return NEW;
  }

  remember(tool: string, args: unknown): void {
    this.calls.push({ tool, args });
  }

  record(step: ChainStep): void {
    this.steps.push(step);
  }

  toRecord(stoppedBy?: string): ChainRecord {
    const steps = this.steps.slice();
    return stoppedBy === undefined ? { origin: this.origin, steps } : { origin: this.origin, steps, stoppedBy };
  }
}
