import type { CallContext } from '@sluice/core';

/**
 * Where the intent mutex leaves its fencing token in `ctx.state`. A
 * registry symbol, so that two copies of this package agree on it.
 */
export const FENCING_TOKEN: unique symbol = Symbol.for('dev.sluice/concurrency/fence');

/**
 * The fencing token of the lock this call holds, or `undefined` when the
 * call holds none. Tokens increase per lock key: a resource that remembers
 * the highest token it accepted can refuse a write that carries an older
 * one (a holder that lost its lock, e.g. after a replica stalled).
 */
export function fencingToken(ctx: Pick<CallContext, 'state'>): number | undefined {
  const token = ctx.state.get(FENCING_TOKEN);
  return typeof token === 'number' ? token : undefined;
}
