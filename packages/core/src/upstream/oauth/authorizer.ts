import type { Clock } from '../../clock.js';
import { messageOf } from '../../errors.js';
import { UpstreamAuthError, isUpstreamAuthError } from './errors.js';
import type { AuthorizationTarget } from './metadata.js';
import { discoverAuthorization } from './metadata.js';
import type { ResolvedClientCredentials, ResolvedUpstreamAuth } from './options.js';
import { requestToken } from './token-endpoint.js';

/**
 * What a transport asks for an upstream's `Authorization` header. A
 * transport with none sends only its static headers and pays nothing.
 */
export interface UpstreamAuthorizer {
  /** The header value for the next request: a cached token, or a fresh one when it is near expiry. */
  authorization(): Promise<string>;
  /**
   * The upstream answered `authorization` with a 401. True when a new token
   * was obtained and the request is worth sending once more; false when
   * that token was itself the fresh one (no refresh storm).
   */
  rejected(authorization: string): Promise<boolean>;
}

/** A token's lifetime when the server does not say: short, so that a revoked grant is noticed. */
const DEFAULT_LIFETIME_SEC = 300;

interface Cached {
  readonly header: string;
  readonly refreshAt: number;
  /** Obtained because the upstream refused the one before: a 401 on it ends the retry. */
  readonly afterRejection: boolean;
}

/**
 * The gateway's own token for one upstream (client-credentials grant):
 * discovered once, cached, replaced shortly before it expires, and replaced
 * once when the upstream refuses it. Concurrent requests share one token
 * request.
 */
export class ClientCredentialsAuthorizer implements UpstreamAuthorizer {
  private target: Promise<AuthorizationTarget> | undefined;
  private cached: Cached | undefined;
  private pending: Promise<Cached> | undefined;

  constructor(
    private readonly upstream: string,
    private readonly url: URL,
    private readonly options: ResolvedClientCredentials,
    private readonly clock: Clock,
  ) {}

  async authorization(): Promise<string> {
    const cached = this.cached;
    if (cached !== undefined && this.clock.now() < cached.refreshAt) return cached.header;
    return (await this.renew(false)).header;
  }

  async rejected(authorization: string): Promise<boolean> {
    const cached = this.cached;
    // Another request already replaced the refused token: use the new one.
    if (cached !== undefined && cached.header !== authorization) return true;
    if (cached?.afterRejection === true) {
      this.cached = undefined;
      return false;
    }
    await this.renew(true);
    return true;
  }

  private renew(afterRejection: boolean): Promise<Cached> {
    this.pending ??= this.fetchToken(afterRejection).finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async fetchToken(afterRejection: boolean): Promise<Cached> {
    const target = await this.discover();
    const { options } = this;
    const issued = await requestToken({
      upstream: this.upstream,
      endpoint: target.tokenEndpoint,
      form: {
        grant_type: 'client_credentials',
        resource: target.resource,
        ...(options.scope === undefined ? {} : { scope: options.scope }),
      },
      client: { id: options.clientId, secret: options.clientSecret, method: options.tokenEndpointAuthMethod },
      timeoutMs: options.timeoutMs,
    });
    const lifetimeMs = (issued.expiresIn ?? DEFAULT_LIFETIME_SEC) * 1_000;
    const earlyMs = Math.min(options.refreshBeforeExpirySec * 1_000, lifetimeMs / 2);
    const cached = {
      header: `Bearer ${issued.accessToken}`,
      refreshAt: this.clock.now() + lifetimeMs - earlyMs,
      afterRejection,
    };
    this.cached = cached;
    return cached;
  }

  /** Discovery runs once; a failed one is tried again on the next request. */
  private discover(): Promise<AuthorizationTarget> {
    this.target ??= discoverAuthorization({
      upstream: this.upstream,
      url: this.url,
      resource: this.options.resource,
      issuer: this.options.issuer,
      tokenEndpoint: this.options.tokenEndpoint,
    }).catch((error: unknown) => {
      this.target = undefined;
      if (isUpstreamAuthError(error)) throw error;
      throw new UpstreamAuthError(
        this.upstream,
        `Sluice could not discover the authorization server of upstream "${this.upstream}" (${messageOf(error)})`,
        'Try again later; if it persists, set `auth.issuer` or `auth.tokenEndpoint`.',
      );
    });
    return this.target;
  }
}

/** The authorizer an upstream's `auth` describes, for its HTTP endpoint; undefined without `auth`. */
export function createAuthorizer(
  upstream: string,
  url: string | undefined,
  auth: ResolvedUpstreamAuth | undefined,
  clock: Clock,
): UpstreamAuthorizer | undefined {
  if (auth === undefined || url === undefined) return undefined;
  return new ClientCredentialsAuthorizer(upstream, new URL(url), auth, clock);
}
