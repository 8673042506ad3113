import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/server';
import type { NativeExtra, NativeHandler, NativeRequest } from './adopt-native.js';
import { authInfoOf, transportOf } from './adopt-native.js';
import type { FeatureContext, FeatureGuards, FeatureMethod } from './features/feature-context.js';
import { accessRefusal, featureRequest, rewrittenResult } from './features/sdk-handlers.js';
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
 * completion: `featureAccess` hides its lists or refuses a request (the client
 * sees the resource or prompt as not found), `featureResult` rewrites its
 * `resources/read` and `prompts/get` answers. Only the methods a tapped hook
 * concerns are wrapped, so an unused hook costs nothing.
 */
export function featureWrappers(guards: FeatureGuards, logger: Logger): Record<string, Wrap> {
  const wrappers: Record<string, Wrap> = {};
  const contextOf = (method: FeatureMethod, extra: NativeExtra, target?: string): FeatureContext => ({
    ...featureRequest(method, authInfoOf(extra), headersOf(extra), transportOf(extra), logger),
    ...(target === undefined ? {} : { target }),
  });
  const refusedTo = (method: FeatureMethod, extra: NativeExtra, target?: string): boolean =>
    accessRefusal(guards, contextOf(method, extra, target)) !== undefined;

  if (guards.access !== undefined) {
    for (const [method, key] of Object.entries(LISTS) as [keyof typeof LISTS, string][])
      wrappers[method] = (original) => async (request, extra) =>
        refusedTo(method, extra) ? { [key]: [] } : original(request, extra);
    for (const method of ['resources/subscribe', 'resources/unsubscribe'] as const)
      wrappers[method] = (original) => async (request, extra) => {
        const uri = stringParam(request, 'uri');
        if (uri !== undefined && refusedTo(method, extra, uri)) throw new ResourceNotFoundError(uri);
        return original(request, extra);
      };
    wrappers['completion/complete'] = (original) => async (request, extra) => {
      const ref = request.params?.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (
        ref?.type === 'ref/prompt' &&
        typeof ref.name === 'string' &&
        refusedTo('completion/complete', extra, ref.name)
      )
        throw promptNotFound(ref.name);
      if (
        ref?.type === 'ref/resource' &&
        typeof ref.uri === 'string' &&
        refusedTo('completion/complete', extra, ref.uri)
      )
        throw new ResourceNotFoundError(ref.uri);
      return original(request, extra);
    };
  }
  if (guards.access === undefined && guards.result === undefined) return wrappers;

  wrappers['resources/read'] = (original) => async (request, extra) => {
    const uri = stringParam(request, 'uri');
    if (uri === undefined) return original(request, extra);
    const ctx = contextOf('resources/read', extra, uri);
    if (accessRefusal(guards, ctx) !== undefined) throw new ResourceNotFoundError(uri);
    const result = (await original(request, extra)) as ReadResourceResult;
    return (await rewrittenResult(guards, { method: 'resources/read', result }, ctx)).result;
  };
  wrappers['prompts/get'] = (original) => async (request, extra) => {
    const name = stringParam(request, 'name');
    if (name === undefined) return original(request, extra);
    const ctx = contextOf('prompts/get', extra, name);
    if (accessRefusal(guards, ctx) !== undefined) throw promptNotFound(name);
    const result = (await original(request, extra)) as GetPromptResult;
    return (await rewrittenResult(guards, { method: 'prompts/get', result }, ctx)).result;
  };
  return wrappers;
}

/** A string parameter of a request the SDK has not validated yet (its own handler does, after ours). */
function stringParam(request: NativeRequest, key: string): string | undefined {
  const value = request.params?.[key];
  return typeof value === 'string' ? value : undefined;
}

function promptNotFound(name: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt ${name} not found`);
}
