import type { CallContext, CallToolResult, Executor, Permit, Semaphore, Store } from '@sluice/core';
import { actionKeyOf } from './action-key.js';
import { busy } from './busy.js';
import { FENCING_TOKEN } from './fencing.js';
import { runHolding } from './hold.js';

export interface MutexSpec {
  readonly store: Store;
  readonly tool: string;
  readonly keyArgs: readonly string[];
  readonly retryAfterMs: number;
}

/** The action key a call holds, kept in its state so that nested calls can see it. */
const HELD_KEY = Symbol('dev.sluice/concurrency/held-key');

/**
 * Whether an enclosing call (through `ctx.call`) holds this same action
 * key. Such a call runs inside its caller's turn, with the caller's token:
 * waiting for the caller's lock would wait forever.
 */
function joinsCaller(ctx: CallContext, key: string): boolean {
  for (let caller = ctx.parent; caller !== undefined; caller = caller.parent) {
    if (caller.state.get(HELD_KEY) !== key) continue;
    ctx.state.set(FENCING_TOKEN, caller.state.get(FENCING_TOKEN));
    return true;
  }
  return false;
}

function runLocked(next: Executor, ctx: CallContext, key: string, permit: Permit): Promise<CallToolResult> {
  ctx.state.set(HELD_KEY, key);
  ctx.state.set(FENCING_TOKEN, permit.fence);
  return runHolding(next, ctx, permit);
}

/**
 * Serializes calls that perform the same action (tool name plus key
 * arguments), first come first served. A call waiting for its turn leaves
 * the line at once when its signal fires. The handler finds the lock's
 * fencing token with `fencingToken(ctx)`.
 */
export function mutexExecutor(next: Executor, spec: MutexSpec): Executor {
  const keyOf = actionKeyOf(spec.tool, spec.keyArgs);
  return (ctx) => {
    const key = keyOf(ctx.arguments);
    if (ctx.parent !== undefined && joinsCaller(ctx, key)) return next(ctx);
    const lock = spec.store.lock(key);
    const permit = lock.tryAcquire();
    if (permit !== undefined) return runLocked(next, ctx, key, permit);
    return waitForTurn(next, ctx, key, lock, spec);
  };
}

/** Waits for the action's turn (`then` rather than `async`: less memory per waiting call). */
function waitForTurn(
  next: Executor,
  ctx: CallContext,
  key: string,
  lock: Semaphore,
  spec: MutexSpec,
): Promise<CallToolResult> {
  return lock.acquire(ctx.signal).then((admission) => {
    if (admission.admitted) return runLocked(next, ctx, key, admission.permit);
    // The in-memory lock never sheds; a shared store may bound its lines.
    return busy({
      tool: spec.tool,
      active: admission.active,
      queued: admission.queued,
      retryAfterMs: spec.retryAfterMs,
    });
  });
}

/**
 * Audit mode: a call whose action is already running is logged (enforce
 * mode would have made it wait) and runs at once; so does a call whose key
 * arguments enforce mode would have refused.
 */
export function auditMutexExecutor(next: Executor, spec: MutexSpec): Executor {
  const keyOf = actionKeyOf(spec.tool, spec.keyArgs);
  return (ctx) => {
    let key: string;
    try {
      key = keyOf(ctx.arguments);
    } catch (error) {
      ctx.logger.warn(
        { event: 'concurrency.would_refuse', err: error },
        `audit: would have refused a call to "${spec.tool}"`,
      );
      return next(ctx);
    }
    if (ctx.parent !== undefined && joinsCaller(ctx, key)) return next(ctx);
    // A one-slot semaphore with no queue beside the real lock: it answers at once, even on stores without a synchronous fast path.
    const probe = spec.store.semaphore(`${key}/audit`, AUDIT_PROBE);
    const permit = probe.tryAcquire();
    if (permit !== undefined) return runLocked(next, ctx, key, permit);
    const wouldWait = (): Promise<CallToolResult> => {
      ctx.logger.info(
        { event: 'concurrency.mutex_would_wait', keyArgs: spec.keyArgs },
        `audit: a call to "${spec.tool}" would have waited for the same action`,
      );
      return next(ctx);
    };
    return probe
      .acquire(ctx.signal)
      .then((admission) => (admission.admitted ? runLocked(next, ctx, key, admission.permit) : wouldWait()));
  };
}

const AUDIT_PROBE = Object.freeze({ maxActive: 1, maxQueue: 0 });
