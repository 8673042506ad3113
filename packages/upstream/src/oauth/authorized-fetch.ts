import type { FetchLike } from '@modelcontextprotocol/client';
import type { UpstreamAuthorizer } from './authorizer.js';

/**
 * A fetch for the SDK's transports that sends the authorizer's header, and
 * sends a request once more when a 401 got the authorizer a new token.
 */
export function authorizedFetch(auth: UpstreamAuthorizer, base: FetchLike): FetchLike {
  return async (url, init) => {
    const send = async () => {
      const headers = new Headers(init?.headers);
      const authorization = await auth.authorization();
      headers.set('authorization', authorization);
      return { authorization, response: await base(url, { ...init, headers }) };
    };
    const first = await send();
    if (first.response.status !== 401 || !(await auth.rejected(first.authorization))) return first.response;
    await first.response.body?.cancel();
    return (await send()).response;
  };
}
