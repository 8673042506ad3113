import { Tokens } from '@sluice/core';
import type { CallContext, FeatureRequests, PluginApi } from '@sluice/core';
import type { CallReply } from './sandbox.js';

/** The pseudo-tool a script's `resources.read(uri)` calls: a slash, which no tool name has. */
export const READ_RESOURCE = 'resources/read';
/** The pseudo-tool a script's `prompts.get(name, args)` calls. */
export const GET_PROMPT = 'prompts/get';

type Layout = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** The server's reads and gets for a caller, once it imports (before, a script has neither). */
export function featureRequestsOf(api: PluginApi): FeatureRequests | undefined {
  const container = api.services.container;
  return container.isRegistered(Tokens.FeatureRequests, true) ? container.resolve(Tokens.FeatureRequests) : undefined;
}

/** The layout plus `resources.read` and `prompts.get` when the server serves them (`resources` and `prompts` are reserved). */
export function withFeatures(layout: Layout, features: FeatureRequests | undefined): Layout {
  if (features === undefined) return layout;
  return { ...layout, resources: { read: READ_RESOURCE }, prompts: { get: GET_PROMPT } };
}

/**
 * A script's resource read or prompt get, made as a request of the script's
 * caller: the request context of the `execute_code` call (its identity,
 * headers and transport), so that every guard of a client's own read or get
 * applies; cancelled with the script. Its answer (`{ contents }`,
 * `{ description, messages }`) is what the script gets.
 */
export async function featureCall(
  features: FeatureRequests,
  tool: string,
  args: Record<string, unknown>,
  ctx: CallContext,
  signal: AbortSignal,
): Promise<CallReply> {
  const mcp = ctx.mcp;
  if (mcp === undefined)
    return { ok: false, code: 'UNAVAILABLE', message: 'Resources and prompts are read only for a request over MCP.' };
  // The script's cancellation; no round of the caller's: a read or get of a script never carries its answers.
  const view = {
    ...mcp,
    mcpReq: { ...mcp.mcpReq, signal, requestState: () => undefined, inputResponses: undefined },
  } as typeof mcp;
  try {
    if (tool === READ_RESOURCE) {
      if (typeof args.uri !== 'string') return invalid('resources.read(uri): uri must be a string');
      return { ok: true, value: plain(await features.readResource(args.uri, view, ctx.transport)) };
    }
    if (typeof args.name !== 'string') return invalid('prompts.get(name, args): name must be a string');
    const given = args.arguments;
    if (given !== undefined && !isStringRecord(given))
      return invalid('prompts.get(name, args): args must be an object of strings');
    return { ok: true, value: plain(await features.getPrompt(args.name, given, view, ctx.transport)) };
  } catch (error) {
    return replyOfRequestError(error);
  }
}

function invalid(message: string): CallReply {
  return { ok: false, code: 'INVALID_ARGUMENTS', message };
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}

/** The answer without `_meta` (the upstream's own bookkeeping). */
function plain(result: object): unknown {
  const rest: Record<string, unknown> = { ...(result as Record<string, unknown>) };
  delete rest._meta;
  return rest;
}

/**
 * A refused or failed read or get, as the script's `ToolError`: a guard's
 * refusal keeps its code (`FORBIDDEN`, `SERVER_BUSY`, ...), an unknown or
 * hidden resource is `RESOURCE_NOT_FOUND`, an unknown prompt `INVALID_PARAMS`.
 */
function replyOfRequestError(error: unknown): CallReply {
  const e = error as { code?: unknown; message?: unknown; data?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message.replace(/^MCP error -?\d+: /, '').slice(0, 500) : 'failed';
  const data = e?.data as { code?: unknown; uri?: unknown } | undefined;
  if (typeof data?.code === 'string') return { ok: false, code: data.code, message };
  // The SDK's resource-not-found error names the URI (its JSON-RPC code is -32002 or, in this version, -32602).
  if (e?.code === -32002 || typeof data?.uri === 'string') return { ok: false, code: 'RESOURCE_NOT_FOUND', message };
  if (e?.code === -32602) return { ok: false, code: 'INVALID_PARAMS', message };
  return { ok: false, code: 'REQUEST_FAILED', message };
}
