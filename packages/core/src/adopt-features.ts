import type { NativeExtra, NativeHandler, NativeRequest } from './adopt-native.js';
import { authInfoOf, transportOf } from './adopt-native.js';
import type { FeatureContext, FeatureGuards, FeatureMethod } from './features/feature-context.js';
import { accessRefusal, featureRequest, requestedUri } from './features/feature-guards.js';
import { guardedRunner } from './features/guarded-run.js';
import type { GuardedKind, RequestContext } from './request.js';
import type { Logger } from './logger.js';
import { headersOf } from './request-headers.js';

type Wrap = (original: NativeHandler) => NativeHandler;

/** A list method and the key its answer keeps its items under. */
const LISTS = {
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
} as const satisfies Partial<Record<FeatureMethod, string>>;

/**
 * The guards `adopt()` puts on an adopted server's own resources, prompts and
 * completion: `listFeatures` hides its lists (asked once per list), and its
 * reads, subscriptions, prompt gets and completions run the one request path
 * (`request` taps, `guard` wrappers, `response` taps) as requests of the
 * server's own (upstream undefined). Only the methods a tapped hook concerns
 * are wrapped, so an unused hook costs nothing.
 */
export function featureWrappers(guards: FeatureGuards, logger: Logger): Record<string, Wrap> {
  const wrappers: Record<string, Wrap> = {};
  const contextOf = (method: FeatureMethod, extra: NativeExtra): FeatureContext =>
    featureRequest(method, authInfoOf(extra), headersOf(extra), transportOf(extra), logger);
  if (guards.access !== undefined)
    for (const [method, key] of Object.entries(LISTS) as [keyof typeof LISTS, string][])
      wrappers[method] = (original) => async (request, extra) =>
        accessRefusal(guards, contextOf(method, extra)) !== undefined ? { [key]: [] } : original(request, extra);
  if (guards.plan === undefined) return wrappers;

  const runGuarded = guardedRunner(guards);
  const guarded = <T>(
    kind: Exclude<GuardedKind, 'tools/call'>,
    extra: NativeExtra,
    request: NativeRequest,
    named: Pick<RequestContext, 'target' | 'completing'>,
    send: () => Promise<T>,
  ): Promise<T> =>
    // The request's own `_meta` too, so that a loop guard extends the stack it came with.
    runGuarded(
      kind,
      undefined,
      contextOf(kind, extra),
      signalOf(extra),
      { ...named, meta: request.params?._meta },
      send,
    );

  for (const method of ['resources/subscribe', 'resources/unsubscribe', 'resources/read'] as const)
    wrappers[method] = (original) => async (request, extra) => {
      const uri = stringParam(request, 'uri');
      if (uri === undefined) return original(request, extra);
      return guarded(method, extra, request, { target: requestedUri(uri) }, () => original(request, extra));
    };
  wrappers['prompts/get'] = (original) => async (request, extra) => {
    const name = stringParam(request, 'name');
    if (name === undefined) return original(request, extra);
    return guarded('prompts/get', extra, request, { target: name }, () => original(request, extra));
  };
  wrappers['completion/complete'] = (original) => async (request, extra) => {
    const ref = request.params?.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
    if (ref?.type === 'ref/prompt' && typeof ref.name === 'string')
      return guarded('completion/complete', extra, request, { target: ref.name, completing: 'prompt' }, () =>
        original(request, extra),
      );
    if (ref?.type === 'ref/resource' && typeof ref.uri === 'string')
      return guarded('completion/complete', extra, request, { target: ref.uri, completing: 'resource' }, () =>
        original(request, extra),
      );
    return original(request, extra);
  };
  return wrappers;
}

/** The request's cancellation, as the SDK version that serves it hands it over. */
function signalOf(extra: NativeExtra): AbortSignal {
  return extra.mcpReq?.signal ?? extra.signal ?? NEVER;
}

const NEVER = new AbortController().signal;

/** A string parameter of a request the SDK has not validated yet (its own handler does, after ours). */
function stringParam(request: NativeRequest, key: string): string | undefined {
  const value = request.params?.[key];
  return typeof value === 'string' ? value : undefined;
}
