import type http from 'node:http';
import type { HttpHost, HttpListener, HttpServing, ListenOptions } from './serving.js';
import type { TransportHooks } from './transport-hooks.js';
import type { ConsentFlows } from './upstream/oauth/consent.js';

/** The fields of `@sluice/http`'s listen options that core sets for the consent routes of `per_user` upstreams. */
interface ConsentRouting {
  readonly routes?: Readonly<Record<string, http.RequestListener>>;
  readonly publicRoutes?: readonly string[];
}

/**
 * Listens with the consent page and callback of `per_user` upstreams added
 * to the listener's routes, authorized by their single-use ticket and state
 * rather than by the listener's authentication, and tells the consent flows
 * where they are served.
 */
export async function listenWithConsent(
  serving: HttpServing,
  host: HttpHost,
  options: ListenOptions,
  hooks: TransportHooks,
  consent: ConsentFlows,
): Promise<HttpListener> {
  const routes = consent.routes();
  // Core's ListenOptions is filled in by @sluice/http; these are the fields of it that core sets.
  const own = options as ListenOptions & ConsentRouting;
  const listener = (await serving.listen(
    host,
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
