// What a Sluice server needs of the MCP SDK's server package to serve a transport. Loaded with the first server that
// can serve (see server-sdk-loader.ts), not with core: a v1 server adopting one guard never loads it.

import { McpServer, ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import type { ServerOptions as SdkServerOptions } from '@modelcontextprotocol/server';
import type { CallRequest, ListContext, Transport } from './context.js';
import type { FeatureCatalog } from './features/catalog.js';
import { admitListen, guardsOf, serveFeatures } from './features/sdk-handlers.js';
import type { ListenCaller } from './features/sdk-handlers.js';
import type { CoreHooks } from './hooks.js';
import type { Logger } from './logger.js';
import { toProtocolError } from './protocol-errors.js';
import type { ToClientError } from './pipeline.js';
import type { CallToolResult, Tool } from './protocol.js';
import { headersOf } from './request-headers.js';
import { presentRound } from './upstream/round-presentation.js';
import type { RoundStateSeal } from './upstream/round-state.js';

export { McpServer, Server, guardsOf };
export { sendChange } from './transport-hooks.js';

/** What a Sluice server lends the SDK servers it creates. */
export interface SdkServerParts {
  readonly info: { readonly name: string; readonly version: string };
  readonly options: SdkServerOptions;
  /** `extendSdk()` registrations; with any, the SDK server is an `McpServer`'s. */
  readonly extensions: readonly ((sdk: McpServer) => void)[];
  readonly logger: Logger;
  readonly hooks: CoreHooks;
  /** Resolves when no tool registration is pending. */
  settled(): Promise<void>;
  list(context: Partial<ListContext>): Tool[];
  /** Runs a call; with `toClient`, a failure rejects with what it makes of it. */
  dispatch(name: string, args: unknown, request: CallRequest, toClient?: ToClientError): Promise<CallToolResult>;
  /** The seal of upstream round trips, asked per call: undefined until the first import. */
  roundSeal(): RoundStateSeal | undefined;
  /** The imported resources, templates and prompts, when there are upstreams. */
  readonly features: FeatureCatalog | undefined;
  /** A URL elicitation (-32042) reached a client: `notify` tells it `notifications/elicitation/complete` later. */
  readonly elicitationSent?: (elicitationId: string, notify: () => Promise<void>) => void;
}

/** A fresh SDK server that serves a Sluice server's tools (and imported features) over one transport. */
export function buildSdkServer(parts: SdkServerParts, transport: Transport): Server {
  let sdk: Server;
  if (parts.extensions.length === 0) {
    sdk = new Server(parts.info, parts.options);
  } else {
    const mcp = new McpServer(parts.info, parts.options);
    for (const extend of parts.extensions) extend(mcp);
    sdk = mcp.server;
  }
  sdk.setRequestHandler('tools/list', async (_request, ctx) => {
    await parts.settled();
    return { tools: parts.list({ headers: headersOf(ctx) ?? {}, authInfo: ctx.http?.authInfo, transport }) };
  });
  sdk.setRequestHandler('tools/call', (request, ctx) => {
    const seal = parts.roundSeal();
    const answer = parts.dispatch(
      request.params.name,
      request.params.arguments,
      {
        meta: request.params._meta,
        signal: ctx.mcpReq.signal,
        requestId: ctx.mcpReq.id,
        authInfo: ctx.http?.authInfo,
        headers: headersOf(ctx),
        transport,
        mcp: seal ? presentRound(ctx, seal) : ctx,
      },
      toProtocolError,
    );
    const sent = parts.elicitationSent;
    if (sent === undefined) return answer;
    return answer.catch((error: unknown) => {
      for (const id of urlElicitationIds(error)) sent(id, async () => sdk.createElicitationCompletionNotifier(id)());
      throw error;
    });
  });
  if (parts.features)
    serveFeatures(sdk, { catalog: parts.features, logger: parts.logger, transport, guards: guardsOf(parts.hooks) });
  return sdk;
}

/** The elicitation ids of a URL elicitation error (-32042) to a client that declared URL elicitation. */
function urlElicitationIds(error: unknown): string[] {
  if (!(error instanceof ProtocolError) || error.code !== (ProtocolErrorCode.UrlElicitationRequired as number))
    return [];
  const elicitations = (error.data as { elicitations?: unknown } | undefined)?.elicitations;
  if (!Array.isArray(elicitations)) return [];
  return elicitations
    .map((e: unknown) => (e as { elicitationId?: unknown } | null)?.elicitationId)
    .filter((id): id is string => typeof id === 'string');
}

/** Admits a 2026-07-28 listen filter's resource URIs as `resources/subscribe` requests (see `admitListen`). */
export function admitListenFilter(
  parts: Pick<SdkServerParts, 'features' | 'logger' | 'hooks'>,
  uris: readonly string[],
  caller: ListenCaller,
): Promise<string[]> {
  if (parts.features === undefined) return Promise.resolve([...uris]);
  const serving = {
    catalog: parts.features,
    logger: parts.logger,
    transport: 'http' as const,
    guards: guardsOf(parts.hooks),
  };
  return admitListen(serving, uris, caller);
}
