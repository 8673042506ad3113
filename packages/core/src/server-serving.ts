import type http from 'node:http';
import type { Server, Transport as SdkTransport } from '@modelcontextprotocol/server';
import type { Logger } from './logger.js';
import type { ServerSdk } from './server-sdk-loader.js';
import type { HttpHost, HttpListener, HttpServing, ListenOptions } from './serving.js';
import type { ChangeAudience, TransportHooks } from './transport-hooks.js';
import type { ConsentServing } from './upstreaming.js';

/** What serving a transport needs of the server it serves. */
export interface ServedServer extends HttpHost {
  readonly logger: Logger;
  createSdkServer(transport: 'in-process' | 'http' | 'stdio'): Server;
}

/** The fields of `@sluice/http`'s listen options that core sets for the consent routes of `per_user` upstreams. */
interface ConsentRouting {
  readonly routes?: Readonly<Record<string, http.RequestListener>>;
  readonly publicRoutes?: readonly string[];
}

/** Whom an in-process connection serves: a caller the listener did not verify. */
const IN_PROCESS: ChangeAudience = { authInfo: undefined, transport: 'in-process' };

/** Connects one SDK transport to a fresh SDK server of `server`; it hears of changes and closes with the server. */
export async function connectTransport(
  server: ServedServer,
  transport: SdkTransport,
  sdkPackage: ServerSdk,
  hooks: TransportHooks,
): Promise<void> {
  const sdk = server.createSdkServer('in-process');
  const detachNotify = hooks.onListChanged((change) => sdkPackage.sendChange(sdk, change, IN_PROCESS));
  const detachClose = hooks.onClose(() => sdk.close());
  sdk.onclose = () => {
    detachNotify();
    detachClose();
  };
  await sdk.connect(transport);
}

/**
 * Serves Streamable HTTP through `@sluice/http` (`serving`). With `consent` (a server
 * with `per_user` upstreams), the consent page and callback are served
 * beside the MCP endpoint, public: their single-use ticket and state
 * authorize them.
 */
export async function listenHttp(
  serving: HttpServing,
  server: ServedServer,
  options: ListenOptions,
  hooks: TransportHooks,
  consent: ConsentServing | undefined,
): Promise<HttpListener> {
  if (consent === undefined) return serving.listen(server, options, hooks);
  // Core's ListenOptions is filled in by @sluice/http; these are the fields of it that core sets.
  const routes = consent.routes();
  const own = options as ListenOptions & ConsentRouting;
  const listener = (await serving.listen(
    server,
    {
      ...own,
      routes: { ...routes, ...own.routes },
      publicRoutes: [...Object.keys(routes), ...(own.publicRoutes ?? [])],
    },
    hooks,
  )) as HttpListener & { readonly url: URL };
  consent.listening(listener.url);
  return listener;
}
