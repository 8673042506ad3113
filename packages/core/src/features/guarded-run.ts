import { toProtocolError } from '../protocol-errors.js';
import { CoreErrorCode, RpcCode, SluiceError } from '../errors.js';
import { INVALID_REQUEST, RpcError, resourceNotFound } from '../rpc-error.js';
import { assertBoundedValue } from '../limits.js';
import { emptyMeta, readIncomingMeta } from '../meta.js';
import type { Meta } from '../meta.js';
import type { CallToolResult } from '../protocol.js';
import { isRefusal, readRefusal } from '../refusal.js';
import type { GuardedKind, RequestContext, RequestExecutor, RequestTarget } from '../request.js';
import type { FeatureContext, FeatureGuards } from './feature-context.js';

/** A feature request's target, as the `guard` hook plans for it. */
export type FeatureTarget = Exclude<RequestTarget, { kind: 'tools/call' }>;

/** The item a guarded feature request names, as its `RequestContext` carries it. */
type Named = Pick<RequestContext, 'target' | 'completing'>;

/**
 * The item a guarded feature request names, and the `_meta` it came with,
 * as sent (`RequestContext.meta` is read from it, only when some hook is
 * tapped). Absent: the request brought none.
 */
export type FeatureItem = Named & { readonly meta?: unknown };

/** Runs one feature request through the `guard` wrappers planned for its kind and upstream. */
export type GuardedRun = <T>(
  kind: Exclude<GuardedKind, 'tools/call'>,
  upstream: string | undefined,
  fctx: FeatureContext | undefined,
  signal: AbortSignal,
  item: FeatureItem,
  send: (ctx?: RequestContext) => Promise<T>,
) => Promise<T>;

/**
 * The `guard` hook for one server's feature requests: wrappers are planned
 * once per kind and upstream, when first requested. With no guard tapped a
 * request runs as it is, building nothing: its `_meta` is not even read.
 */
export function guardedRunner(guards: FeatureGuards | undefined): GuardedRun {
  const plan = guards?.plan;
  if (plan === undefined) return (_kind, _upstream, _fctx, _signal, _item, send) => send();
  const planned = new Map<string, RequestExecutor>();
  return async (kind, upstream, fctx, signal, item, send) => {
    if (fctx === undefined) return send();
    const key = `${kind} ${upstream ?? ''}`;
    let executor = planned.get(key);
    if (executor === undefined) planned.set(key, (executor = plan({ kind, upstream })));
    const request: Sending = {
      ...fctx,
      // The raw `_meta` the item carries is replaced by the one read from it.
      ...item,
      kind,
      upstream,
      signal,
      meta: incomingMeta(item.meta),
      outgoingMeta: emptyMeta(),
      [SEND]: send,
    };
    let answer: unknown;
    try {
      answer = await executor(request);
    } catch (error) {
      // What a plugin throws reaches here as a SluiceError (its facade names it). A JSON-RPC error of another
      // kind is the request's own (an upstream's, or an adopted handler's, whichever SDK made it): it passes as it is.
      if (!SluiceError.is(error) && typeof (error as { code?: unknown } | null)?.code === 'number') throw error;
      throw toProtocolError(error);
    }
    if (isRefusalAnswer(answer)) throw refusalError(answer, kind, item);
    // The innermost executor is `send`: what comes back unrefused is its answer.
    return answer as Awaited<ReturnType<typeof send>>;
  };
}

/** A feature request's `_meta`, read as a tool call's is: bounded, prototype-free; past the bounds a -32602. */
function incomingMeta(raw: unknown): Readonly<Meta> {
  try {
    assertBoundedValue(raw, '_meta');
    return readIncomingMeta(raw);
  } catch (error) {
    throw toProtocolError(error);
  }
}

const SEND = Symbol('send');
type Sending = RequestContext &
  Omit<FeatureContext, 'target'> & { readonly [SEND]: (ctx: RequestContext) => Promise<unknown> };

/** The innermost executor of every guarded feature request: the request itself, with the context it reached. */
export const sendRequest: RequestExecutor = (ctx) => (ctx as Sending)[SEND](ctx);

/** Whether a guarded request's answer is a refusal built by `refusal()`. */
export function isRefusalAnswer(answer: unknown): answer is CallToolResult {
  return (
    typeof answer === 'object' &&
    answer !== null &&
    (answer as CallToolResult).isError === true &&
    isRefusal(answer as CallToolResult)
  );
}

/**
 * A refusal of a request other than a tool call, as the JSON-RPC error its
 * client gets. A `NOT_FOUND` refusal of a request that names its item is the
 * error of an item that does not exist: the client cannot tell it apart. A
 * `logging/setLevel` names no item (its target is a level): its `NOT_FOUND`
 * stays a refusal, which the gateway reads as "this upstream is not there".
 */
export function refusalError(
  result: CallToolResult,
  kind?: Exclude<GuardedKind, 'tools/call'>,
  named?: Named,
): RpcError {
  const meta = readRefusal(result);
  const code = meta?.code ?? 'REFUSED';
  if (
    code === CoreErrorCode.NOT_FOUND &&
    kind !== undefined &&
    kind !== 'logging/setLevel' &&
    named?.target !== undefined
  )
    return notFound(kind, named.target, named.completing);
  const message = `${code}: ${meta?.message ?? 'refused by policy'}`;
  return new RpcError(INVALID_REQUEST, message, { ...meta, code });
}

/** The error of a missing item, as the handlers answer it: -32602, a resource's with its URI as data. */
function notFound(kind: Exclude<GuardedKind, 'tools/call'>, target: string, completing: Named['completing']): RpcError {
  const prompt = kind === 'prompts/get' || (kind === 'completion/complete' && completing === 'prompt');
  if (prompt) return new RpcError(RpcCode.INVALID_PARAMS, `Prompt "${target}" not found`);
  return resourceNotFound(target);
}
