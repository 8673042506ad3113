import { MetaKey } from '@sluice/core';
import type { Logger, RequestContext, RequestExecutor, RequestTarget } from '@sluice/core';
import type { EgressRecord } from './intervention.js';
import { jsonSize, jsonStringSize } from './json-size.js';
import { UPSTREAM_READ_FACTOR } from './read-factor.js';

/** A `completion/complete` answer, as the protocol shapes it. */
interface CompleteResult {
  readonly completion: { readonly values: string[]; readonly total?: number; readonly hasMore?: boolean };
  readonly _meta?: Record<string, unknown>;
}

/** The feature requests whose upstream answers egress reads within a cut, and (completions) caps here. */
const CAPPED_KINDS: ReadonlySet<RequestTarget['kind']> = new Set([
  'resources/read',
  'prompts/get',
  'completion/complete',
]);

/**
 * Plans egress for one kind of feature request to one upstream: the
 * gateway stops reading an answer past `UPSTREAM_READ_FACTOR` × the limit
 * (in enforce mode), and a completion's answer over the limit keeps the
 * values that fit. Reads and prompt gets are cut by the `featureResult` tap.
 */
export function featureEgress(
  next: RequestExecutor,
  target: RequestTarget,
  limitBytes: number,
  audit: boolean,
): RequestExecutor {
  if (target.upstream === undefined || !CAPPED_KINDS.has(target.kind)) return next;
  const cut = Math.min(limitBytes * UPSTREAM_READ_FACTOR, Number.MAX_SAFE_INTEGER);
  const send: RequestExecutor = audit
    ? next
    : (ctx) => next({ ...ctx, responseLimitBytes: Math.min(ctx.responseLimitBytes ?? cut, cut) });
  if (target.kind !== 'completion/complete') return send;
  return async (ctx) => {
    const answer = await send(ctx);
    return isCompletion(answer) ? capCompletion(answer, ctx, target.upstream, limitBytes, audit) : answer;
  };
}

function isCompletion(answer: unknown): answer is CompleteResult {
  if (typeof answer !== 'object' || answer === null) return false;
  const completion: unknown = (answer as { completion?: unknown }).completion;
  return (
    typeof completion === 'object' &&
    completion !== null &&
    'values' in completion &&
    Array.isArray(completion.values) &&
    completion.values.every((value) => typeof value === 'string')
  );
}

/**
 * Keeps, in order, the completion values that fit within `limitBytes` (the
 * answer's JSON size, the record in `_meta` included), and says there are
 * more (`hasMore`, `total`). In audit mode it only logs.
 */
export function capCompletion(
  answer: CompleteResult,
  ctx: RequestContext,
  upstream: string | undefined,
  limitBytes: number,
  audit: boolean,
): CompleteResult {
  if (jsonSize(answer, limitBytes) <= limitBytes) return answer;
  const originalBytes = Math.min(jsonSize(answer), Number.MAX_SAFE_INTEGER);
  const { values } = answer.completion;
  const total = Math.max(answer.completion.total ?? 0, values.length);
  // The answer without its values, with the largest record it could carry: what is left is room for values.
  const frame = jsonSize({
    ...answer,
    completion: { ...answer.completion, values: [], total, hasMore: true },
    _meta: {
      ...answer._meta,
      [MetaKey.EGRESS]: { originalBytes, keptBytes: limitBytes, limitBytes } satisfies EgressRecord,
    },
  });
  let left = limitBytes - frame;
  const kept: string[] = [];
  for (const value of values) {
    const size = jsonStringSize(value, left) + (kept.length > 0 ? 1 : 0);
    if (size > left) break;
    kept.push(value);
    left -= size;
  }
  const keptBytes = limitBytes - frame - left;
  log(ctx.logger, { upstream, target: ctx.target, originalBytes, keptBytes, limitBytes, audit });
  if (audit) return answer;
  const record: EgressRecord = { originalBytes, keptBytes, limitBytes };
  return {
    ...answer,
    completion: { ...answer.completion, values: kept, total, hasMore: true },
    _meta: { ...answer._meta, [MetaKey.EGRESS]: record },
  };
}

interface Cut {
  readonly upstream: string | undefined;
  readonly target: string | undefined;
  readonly originalBytes: number;
  readonly keptBytes: number;
  readonly limitBytes: number;
  readonly audit: boolean;
}

function log(logger: Logger, { audit, ...cut }: Cut): void {
  logger.warn(
    { event: 'egress.truncated', method: 'completion/complete', ...cut, ...(audit ? { audit } : {}) },
    audit
      ? 'audit: egress would have truncated a completion/complete answer'
      : 'egress truncated a completion/complete answer',
  );
}
