import type { Permit, RequestContext } from '@sluice/core';

/**
 * Runs the rest of the chain while holding a permit, and gives the permit
 * back exactly once however the call ends: a result, a throw, or an abort.
 * `postCall` taps (truncation) run after the executor returns, so the slot
 * is already free when they rewrite the result. A call whose signal fired
 * before it got here runs none of the chain.
 *
 * This is every guarded call's path: the permit goes back on a branch of
 * its own, and the inner promise is returned as it is, so the wrapper adds
 * one reaction per call and no promise for the core to attribute. The
 * branch is registered before anyone else can wait on the inner promise,
 * so the slot is free before the pipeline sees the result.
 */
export function runHolding<C extends RequestContext, R>(
  next: (ctx: C) => Promise<R>,
  ctx: C,
  permit: Permit,
): Promise<R> {
  if (ctx.signal.aborted) {
    permit.release();
    // The caller's abort reason, passed on unchanged as an async function would reject with it.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(ctx.signal.reason);
  }
  let running: Promise<R>;
  try {
    running = next(ctx);
  } catch (error) {
    permit.release();
    // What the executor threw, passed on unchanged as an async function would reject with it.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(error);
  }
  const release = (): void => permit.release();
  // The branch settles either way (its handlers do not throw): it never leaves a rejection unhandled.
  void running.then(release, release);
  return running;
}
