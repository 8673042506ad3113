import type { ValidationResult } from '@sluice/core';
import type { ChainState } from './chain-state.js';
import type { ChainStop } from './chain-stop.js';
import { stops } from './chain-stop.js';
import type { NextTool } from './directive.js';

/** What a chain needs to know about a tool it is about to call. */
export interface ChainTarget {
  /** The name to call it by on this side (an imported tool's directive names it as its upstream does). */
  readonly name: string;
  /** Whether a chain may call it (the `targets` rule). */
  readonly allowed: boolean;
  /** Checks arguments up front; absent when the tool's own server checks them before any guard runs. */
  validate?(args: Record<string, unknown>): ValidationResult | Promise<ValidationResult>;
}

/** Finds the tool a directive of `from` names; `undefined` when no such tool is exposed. */
export type TargetLookup = (name: string, from: string) => ChainTarget | undefined | Promise<ChainTarget | undefined>;

export type Vetted = { readonly ok: true; readonly next: NextTool } | { readonly ok: false; readonly stop: ChainStop };

const refused = (stop: ChainStop): Vetted => ({ ok: false, stop });

/**
 * The checks every chained call passes before it runs, in order: depth,
 * exposure, the targets rule, cycles, arguments. Returns the call to make
 * (under the name this side knows the tool by), or why it may not run.
 * Synchronous unless the target's schema check is not.
 */
export function vetNext(state: ChainState, next: NextTool, target: ChainTarget | undefined): Vetted | Promise<Vetted> {
  if (state.full) return refused(stops.tooDeep(next, state.maxDepth));
  if (target === undefined) return refused(stops.unknownTool(next));
  const call: NextTool = target.name === next.tool ? next : { tool: target.name, arguments: next.arguments };
  if (!target.allowed) return refused(stops.targetDenied(call));
  const cycle = state.check(call.tool, call.arguments);
  if (cycle.kind === 'unusable') return refused(stops.unusableArguments(call, cycle.message));
  if (cycle.kind === 'repeat') return refused(stops.circular(call));
  if (target.validate === undefined) return accepted(state, call);
  const checked = attempt(target.validate.bind(target), call.arguments);
  return checked instanceof Promise ? checked.then((c) => settle(state, call, c)) : settle(state, call, checked);
}

function accepted(state: ChainState, call: NextTool): Vetted {
  state.remember(call.tool, call.arguments);
  return { ok: true, next: call };
}

function settle(state: ChainState, call: NextTool, checked: ValidationResult): Vetted {
  return checked.ok ? accepted(state, call) : refused(stops.invalidArguments(call, checked.message));
}

const UNCHECKABLE: ValidationResult = Object.freeze({ ok: false, message: 'the input schema could not check them' });

/** A schema check that throws is a failed check, never a crash. */
function attempt(
  validate: NonNullable<ChainTarget['validate']>,
  args: Record<string, unknown>,
): ValidationResult | Promise<ValidationResult> {
  try {
    const checked = validate(args);
    return checked instanceof Promise ? checked.catch(() => UNCHECKABLE) : checked;
  } catch {
    return UNCHECKABLE;
  }
}
