import type { CallContext, CallToolResult, Executor, Permit } from '@sluice/core';

/**
 * Runs the rest of the chain while holding a permit, and gives the permit
 * back exactly once however the call ends: a result, a throw, or an abort.
 * `postCall` taps (truncation) run after the executor returns, so the slot
 * is already free when they rewrite the result. A call whose signal fired
 * before it got here runs none of the chain. Written with `then` rather
 * than `async`: this is every guarded call's path, and it costs less.
 */
export function runHolding(next: Executor, ctx: CallContext, permit: Permit): Promise<CallToolResult> {
  if (ctx.signal.aborted) {
    permit.release();
    // The caller's abort reason, passed on unchanged as an async function would reject with it.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(ctx.signal.reason);
  }
  let running: Promise<CallToolResult>;
  try {
    running = next(ctx);
  } catch (error) {
    permit.release();
    // What the executor threw, passed on unchanged as an async function would reject with it.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(error);
  }
  return running.then(
    (result) => {
      permit.release();
      return result;
    },
    (error: unknown) => {
      permit.release();
      throw error;
    },
  );
}
