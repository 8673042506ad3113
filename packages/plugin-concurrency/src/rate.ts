import { countInWindow, refusal } from '@sluice/core';
import type { CallToolResult, RequestContext } from '@sluice/core';
import { ConcurrencyErrorCode } from './errors.js';
import type { LimiterSpec, Run } from './limiter.js';
import { slotsKey, slotsKeyOf } from './limiter.js';

/**
 * Admits at most `rate.calls` calls per fixed window of `rate.perMs`: one
 * counter per window in the store (so replicas sharing a store share it).
 * A store that times windows itself (both built-in stores) starts a window
 * with its first call and ends it by its own clock, so replicas whose clocks
 * disagree still count one window; on another store the windows are numbered
 * from the epoch by this process's clock, kept two windows long. Audit mode
 * logs what it would refuse and runs the call.
 */
export function rateExecutor<C extends RequestContext, R>(
  next: Run<C, R>,
  spec: LimiterSpec,
  audit: boolean,
): Run<C, R | CallToolResult> {
  const rate = spec.limit.rate;
  if (rate === undefined) return next;
  // The window's length is part of its key: a rate given a new `perMs` counts afresh, never in a window of the old.
  const keyOf = slotsKeyOf(spec, `${slotsKey(spec.tool)}/rate/${rate.perMs}`);
  return async (ctx) => {
    const { count: calls, resetMs: retryAfterMs } = await countInWindow(spec.store, keyOf(ctx), rate.perMs);
    if (calls <= rate.calls) return next(ctx);
    if (audit) {
      ctx.logger.warn(
        { event: 'concurrency.would_rate_limit', count: calls, ...rate },
        `audit: would refuse "${spec.tool}"`,
      );
      return next(ctx);
    }
    return rateLimited(ctx, spec.subject ?? `Tool "${spec.tool}"`, rate, retryAfterMs);
  };
}

function rateLimited(
  ctx: RequestContext,
  subject: string,
  rate: { calls: number; perMs: number },
  retryAfterMs: number,
): CallToolResult {
  ctx.logger.warn({ event: 'concurrency.rate_limited', ...rate, retryAfterMs }, `rate-limited ${subject}`);
  return refusal({
    code: ConcurrencyErrorCode.RATE_LIMITED,
    message: `${subject} allows ${rate.calls} calls per ${rate.perMs} ms, and they are used up.`,
    suggestion: `Wait ${Math.ceil(retryAfterMs / 1000)} s before calling it again, and batch the work into fewer calls.`,
    retryAfterMs,
    details: { ...rate },
  });
}
