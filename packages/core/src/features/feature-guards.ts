import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/server';
import { identityOf } from '../auth/identity.js';
import type { Headers, Transport } from '../context.js';
import { RpcCode, messageOf } from '../errors.js';
import type { CoreHooks } from '../hooks.js';
import type { Logger } from '../logger.js';
import { planRequest, requestsTapped } from '../pipeline.js';
import { toProtocolError } from '../protocol-errors.js';
import { RpcError } from '../rpc-error.js';
import type { AuthInfo, ServerContext } from '../protocol.js';
import { canonicalUri } from './canonical-uri.js';
import type { FeatureContext, FeatureGuards, FeatureMethod } from './feature-context.js';
import { sendRequest } from './guarded-run.js';
import type { FeatureTarget } from './guarded-run.js';

// The feature hooks as a server's own requests meet them: adopt() guards an SDK server's resources and prompts with
// these, and @sluice/upstream guards the requests it proxies to imported upstreams with the same ones.

/**
 * Resource reads and prompt gets made inside the server for a request's
 * caller (a code-mode script's), exactly as that caller's own requests over
 * `mcp` would be: the same canonical URI, deny lists and the one request
 * path (`request`, `guard`, `response` taps: authz among them), with the
 * `_meta` of that caller's request (`mcp.mcpReq._meta`) as theirs.
 * Registered under `Tokens.FeatureRequests` once a server imports.
 */
export interface FeatureRequests {
  readResource(uri: string, mcp: ServerContext, transport: Transport): Promise<ReadResourceResult>;
  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    mcp: ServerContext,
    transport: Transport,
  ): Promise<GetPromptResult>;
}

/** A requested resource URI in its canonical spelling; one that names no resource is an invalid request. */
export function requestedUri(uri: string): string {
  try {
    return canonicalUri(uri);
  } catch (error) {
    throw new RpcError(RpcCode.INVALID_PARAMS, messageOf(error));
  }
}

/** A `FeatureContext` before the upstream and target are known. */
export function featureRequest(
  method: FeatureMethod,
  authInfo: AuthInfo | undefined,
  headers: Headers | undefined,
  transport: Transport,
  logger: Logger,
): FeatureContext {
  return {
    method,
    upstream: undefined,
    headers: headers ?? {},
    authInfo,
    auth: identityOf(authInfo),
    transport,
    logger,
  };
}

/** Why the `listFeatures` hook hides an item of a list, if it does; a tap's error reaches the client as a protocol error. */
export function accessRefusal(guards: FeatureGuards | undefined, ctx: FeatureContext): string | undefined {
  try {
    return guards?.access?.(ctx);
  } catch (error) {
    throw toProtocolError(error);
  }
}

/**
 * The feature hooks as the handlers call them: each only when some plugin
 * tapped it for these kinds (an unused hook costs nothing). `plan` is the one
 * request path (`request`, `guard`, `response`), planned per kind and upstream.
 */
export function guardsOf(hooks: Pick<CoreHooks, 'listFeatures' | 'request' | 'response' | 'guard'>): FeatureGuards {
  return {
    ...(requestsTapped(hooks) ? { plan: (target: FeatureTarget) => planRequest(hooks, target, sendRequest) } : {}),
    ...(hooks.listFeatures.isUsed() ? { access: (ctx: FeatureContext) => hooks.listFeatures.call(ctx) } : {}),
  };
}

/** The caller of a 2026-07-28 `subscriptions/listen`, as the transport authenticated it. */
export interface ListenCaller {
  readonly authInfo: AuthInfo | undefined;
  readonly headers: Headers | undefined;
  readonly signal: AbortSignal;
}
