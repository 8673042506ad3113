import type { CallToolResult, RequestContext, Semaphore, SemaphoreOptions, Store } from '@sluice/core';
import { KEY_PREFIX } from './action-key.js';
import { busy } from './busy.js';
import { runHolding } from './hold.js';
import type { Limit } from './options.js';

/** One guarded run, of a tool call or of any other request kind. */
export type Run<C extends RequestContext, R> = (ctx: C) => Promise<R>;

export interface LimiterSpec {
  readonly store: Store;
  /** The tool, or `<kind> <upstream>` for other requests: names the slots. */
  readonly tool: string;
  /** How refusals name what is full; default `Tool "<tool>"`. */
  readonly subject?: string;
  readonly limit: Limit;
  readonly retryAfterMs: number;
}

export const slotsKey = (tool: string): string => `${KEY_PREFIX}slots/${tool}`;

/** The longest caller subject put into a key; longer ones are cut (subjects are verified, not chosen). */
const MAX_SUBJECT_IN_KEY = 256;

/** The slots a call takes: the tool's, or the tool's for this caller when limits are per caller. */
export function slotsKeyOf(spec: LimiterSpec, base: string): (ctx: RequestContext) => string {
  if (spec.limit.per !== 'caller') return () => base;
  return (ctx) => {
    const subject = ctx.auth ? `${ctx.auth.method}:${ctx.auth.subject}` : 'anonymous';
    return `${base}/caller/${encodeURIComponent(subject.slice(0, MAX_SUBJECT_IN_KEY))}`;
  };
}

/**
 * Wraps a tool's executor in its semaphore: a free slot runs the call at
 * once, a full set of slots queues it (FIFO), a full queue sheds it with
 * `SERVER_BUSY`. The semaphore is asked of the store on every call, since
 * the store collects idle ones.
 */
export function limitExecutor<C extends RequestContext, R>(
  next: Run<C, R>,
  spec: LimiterSpec,
): Run<C, R | CallToolResult> {
  const keyOf = slotsKeyOf(spec, slotsKey(spec.tool));
  const options: SemaphoreOptions = Object.freeze({ maxActive: spec.limit.maxActive, maxQueue: spec.limit.maxQueue });
  return (ctx) => {
    const semaphore = spec.store.semaphore(keyOf(ctx), options);
    const permit = semaphore.tryAcquire();
    if (permit !== undefined) return runHolding(next, ctx, permit);
    return waitForSlot(next, ctx, semaphore, spec);
  };
}

/** Waits in line (`then` rather than `async`: a waiting call's frame is what 100,000 waiters multiply). */
function waitForSlot<C extends RequestContext, R>(
  next: Run<C, R>,
  ctx: C,
  semaphore: Semaphore,
  spec: LimiterSpec,
): Promise<R | CallToolResult> {
  return semaphore
    .acquire(ctx.signal)
    .then((admission): Promise<R | CallToolResult> | CallToolResult =>
      admission.admitted ? runHolding(next, ctx, admission.permit) : shed(ctx, spec, admission),
    );
}

function shed(
  ctx: RequestContext,
  spec: LimiterSpec,
  { active, queued }: { active: number; queued: number },
): CallToolResult {
  const { maxActive, maxQueue } = spec.limit;
  ctx.logger.warn(
    { event: 'concurrency.shed', active, queued, maxActive, maxQueue },
    `shed a call to "${spec.tool}": at capacity`,
  );
  return busy({ tool: spec.tool, subject: spec.subject, active, queued, retryAfterMs: spec.retryAfterMs });
}

/**
 * Audit mode: nothing waits and nothing is shed. Running calls hold slots
 * of a semaphore as large as the limit plus its queue, and a call that finds
 * it full (one that enforce mode would have shed) is logged and runs anyway.
 */
export function auditLimitExecutor<C extends RequestContext, R>(next: Run<C, R>, spec: LimiterSpec): Run<C, R> {
  const keyOf = slotsKeyOf(spec, `${slotsKey(spec.tool)}/audit`);
  const { maxActive, maxQueue } = spec.limit;
  const options: SemaphoreOptions = Object.freeze({ maxActive: maxActive + maxQueue, maxQueue: 0 });
  const runAnyway = (ctx: C, running: number): Promise<R> => {
    ctx.logger.warn(
      { event: 'concurrency.would_shed', running, maxActive, maxQueue },
      `audit: would have shed a call to "${spec.tool}"`,
    );
    return next(ctx);
  };
  return (ctx) => {
    const semaphore = spec.store.semaphore(keyOf(ctx), options);
    const permit = semaphore.tryAcquire();
    if (permit !== undefined) return runHolding(next, ctx, permit);
    // No queue (maxQueue 0), so acquire() answers at once; stores without a synchronous fast path (Redis) take this way.
    return semaphore
      .acquire(ctx.signal)
      .then((admission) =>
        admission.admitted ? runHolding(next, ctx, admission.permit) : runAnyway(ctx, admission.active),
      );
  };
}
