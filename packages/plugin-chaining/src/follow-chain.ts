import { readRefusal } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import type { ChainStep } from './chain-record.js';
import type { ChainState } from './chain-state.js';
import type { ChainStop, Landed } from './chain-stop.js';
import { finishedResult, stoppedResult, stops } from './chain-stop.js';
import type { NextTool } from './directive.js';
import { readDirective } from './directive.js';
import type { TargetLookup } from './vet-next.js';
import { vetNext } from './vet-next.js';

/** Told what a chain does, for logs and callbacks. */
export interface ChainObserver {
  step?(step: ChainStep, state: ChainState): void;
  stopped?(stop: ChainStop, state: ChainState): void;
}

/**
 * How one side runs chains: the plugin through `ctx.call()`, the client
 * helper through an MCP client. The loop itself is the same.
 */
export interface ChainDriver {
  readonly state: ChainState;
  readonly target: TargetLookup;
  /** Whether the directive in a step's result is followed (the `tools` rule). */
  continues(tool: string): boolean;
  call(next: NextTool): Promise<CallToolResult>;
  /** Turns a chained call's failure into a stop; `undefined` lets the failure propagate. */
  stopFor(error: unknown, next: NextTool): ChainStop | undefined;
  readonly signal?: AbortSignal;
  readonly observer?: ChainObserver;
}

/**
 * Follows next-tool directives from `first` (the result of the call that
 * started the chain) until a result names no next tool, a step may not
 * continue the chain, or a check or guard stops it.
 */
export async function followChain(driver: ChainDriver, first: Landed): Promise<CallToolResult> {
  const { state } = driver;
  let last = first;
  for (;;) {
    if (last !== first && !driver.continues(last.tool)) return finishedResult(state, last.result);
    const read = readDirective(last.result);
    if (read.kind === 'none') return finishedResult(state, last.result);
    if (read.kind === 'invalid') return stop(driver, stops.invalidDirective(read.key, read.message), last);
    const target = driver.target(read.next.tool, last.tool);
    const pending = vetNext(state, read.next, target instanceof Promise ? await target : target);
    const vetted = pending instanceof Promise ? await pending : pending;
    if (!vetted.ok) {
      const tool = vetted.stop.pending?.tool ?? read.next.tool;
      return stop(driver, vetted.stop, last, { tool, durationMs: 0, outcome: 'refused', code: vetted.stop.code });
    }
    const next = vetted.next;
    driver.signal?.throwIfAborted();
    const started = performance.now();
    let result: CallToolResult;
    try {
      result = await driver.call(next);
    } catch (error) {
      const failed = driver.stopFor(error, next);
      if (failed === undefined) throw error;
      return stop(driver, failed, last, {
        tool: next.tool,
        durationMs: performance.now() - started,
        outcome: 'refused',
        code: failed.code,
      });
    }
    const durationMs = performance.now() - started;
    const refused = readRefusal(result);
    if (refused) {
      const why = stops.stepRefused(next, refused);
      return stop(driver, why, last, {
        tool: next.tool,
        durationMs,
        outcome: 'refused',
        code: why.refusal?.code ?? why.code,
      });
    }
    record(driver, { tool: next.tool, durationMs, outcome: result.isError === true ? 'error' : 'ok' });
    last = { tool: next.tool, result };
  }
}

function record(driver: ChainDriver, step: ChainStep): void {
  driver.state.record(step);
  driver.observer?.step?.(step, driver.state);
}

function stop(driver: ChainDriver, why: ChainStop, last: Landed, step?: ChainStep): CallToolResult {
  if (step) record(driver, step);
  driver.observer?.stopped?.(why, driver.state);
  return stoppedResult(driver.state, why, last);
}
