// What a Sluice server needs of the MCP SDK's server package to serve a transport. Loaded with the first server that
// can serve (see server-sdk-loader.ts), not with core: a v1 server adopting one guard never loads it. The package
// itself comes from the loader, which imports it by name when it is there.

import type { McpServer, Server } from '@modelcontextprotocol/server';
import type { ServerOptions as SdkServerOptions } from '@modelcontextprotocol/server';
import type { CallRequest, ListContext, Transport } from './context.js';
import type { CoreHooks } from './hooks.js';
import type { Logger } from './logger.js';
import { toProtocolError } from './protocol-errors.js';
import type { ToClientError } from './pipeline.js';
import type { CallToolResult, Tool } from './protocol.js';
import { headersOf } from './request-headers.js';
import type { ServerUpstreams } from './upstreaming.js';

export { sendChange } from './transport-hooks.js';

/** The classes of the SDK's server package a Sluice server builds its SDK servers from. */
export interface ServerClasses {
  readonly McpServer: typeof McpServer;
  readonly Server: typeof Server;
}

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
  /** The imported upstreams (`@sluice/upstream`), asked per call: undefined until the first import. */
  upstreams(): ServerUpstreams | undefined;
}

/** A fresh SDK server that serves a Sluice server's tools (and imported features) over one transport. */
export function buildSdkServer(classes: ServerClasses, parts: SdkServerParts, transport: Transport): Server {
  let sdk: Server;
  if (parts.extensions.length === 0) {
    sdk = new classes.Server(parts.info, parts.options);
  } else {
    const mcp = new classes.McpServer(parts.info, parts.options);
    for (const extend of parts.extensions) extend(mcp);
    sdk = mcp.server;
  }
  sdk.setRequestHandler('tools/list', async (_request, ctx) => {
    await parts.settled();
    return { tools: parts.list({ headers: headersOf(ctx) ?? {}, authInfo: ctx.http?.authInfo, transport }) };
  });
  sdk.setRequestHandler('tools/call', (request, ctx) => {
    const upstreams = parts.upstreams();
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
        mcp: upstreams ? upstreams.presentRound(ctx) : ctx,
      },
      toProtocolError,
    );
    // Only a server with per_user upstreams has this: the others pay nothing per call for it.
    const watch = upstreams?.watchConsent;
    return watch === undefined ? answer : watch(sdk, answer);
  });
  parts.upstreams()?.serveFeatures(sdk, transport);
  return sdk;
}
