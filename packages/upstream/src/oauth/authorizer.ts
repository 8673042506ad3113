import type { CallerIdentity } from '@sluice/core';
import { subjectTokenOf } from '@sluice/core/internal';
import type { Clock } from '@sluice/core';
import { CoreErrorCode, SluiceError, messageOf } from '@sluice/core';
import { UpstreamAuthError, isUpstreamAuthError } from './errors.js';
import type { AuthorizationTarget } from './metadata.js';
import { discoverAuthorization } from './metadata.js';
import type { ResolvedTokenExchange, ResolvedUpstreamAuth } from './options.js';
import { requestToken } from './token-endpoint.js';
import type { PerUserContext } from './per-user.js';
import { PerUserGrants } from './per-user.js';

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

/** An upstream's authorizers: the connection's own, and, for `token_exchange`, one per caller. */
export interface UpstreamAuthorizers {
  readonly connection: UpstreamAuthorizer;
  /** The authorizer of one call's caller; undefined when calls use the connection's. */
  forCaller?(caller: CallerIdentity | undefined): UpstreamAuthorizer;
}

/** A token's lifetime when the server does not say: short, so that a revoked grant is noticed. */
const DEFAULT_LIFETIME_SEC = 300;
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

interface Cached {
  readonly header: string;
  readonly refreshAt: number;
  /** Obtained because the upstream refused the one before: a 401 on it ends the retry. */
  readonly afterRejection: boolean;
}

/** The gateway's client at one upstream's authorization server: discovery once, then token requests. */
export class TokenClient {
  private target: Promise<AuthorizationTarget> | undefined;

  constructor(
    readonly upstream: string,
    private readonly url: URL,
    readonly options: ResolvedUpstreamAuth,
    readonly clock: Clock,
  ) {}

  /** A token request at the discovered endpoint; `scope` is sent unless `withScope` is false (a code's scope is the consented one). */
  async request(grant: (target: AuthorizationTarget) => Record<string, string>, withScope = true) {
    const target = await this.discover();
    const { options } = this;
    const scope: Record<string, string> = withScope && options.scope !== undefined ? { scope: options.scope } : {};
    return requestToken({
      upstream: this.upstream,
      endpoint: target.tokenEndpoint,
      form: { ...grant(target), ...scope },
      client: { id: options.clientId, secret: options.clientSecret, method: options.tokenEndpointAuthMethod },
      timeoutMs: options.timeoutMs,
    });
  }

  /** Discovery runs once; a failed one is tried again on the next request. */
  discover(): Promise<AuthorizationTarget> {
    this.target ??= discoverAuthorization({
      upstream: this.upstream,
      url: this.url,
      resource: this.options.resource,
      issuer: this.options.issuer,
      tokenEndpoint: this.options.tokenEndpoint,
      authorizationEndpoint: this.options.type === 'per_user' ? this.options.authorizationEndpoint : undefined,
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

/**
 * One grant's token: cached, replaced shortly before it expires, and
 * replaced once when the upstream refuses it. Concurrent requests share one
 * token request.
 */
class CachedGrant implements UpstreamAuthorizer {
  private cached: Cached | undefined;
  private pending: Promise<Cached> | undefined;

  constructor(
    private readonly client: TokenClient,
    private readonly grant: (target: AuthorizationTarget) => Record<string, string>,
  ) {}

  async authorization(): Promise<string> {
    const cached = this.cached;
    if (cached !== undefined && this.client.clock.now() < cached.refreshAt) return cached.header;
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
    const issued = await this.client.request(this.grant);
    const lifetimeMs = (issued.expiresIn ?? DEFAULT_LIFETIME_SEC) * 1_000;
    const earlyMs = Math.min(this.client.options.refreshBeforeExpirySec * 1_000, lifetimeMs / 2);
    const cached = {
      header: `Bearer ${issued.accessToken}`,
      refreshAt: this.client.clock.now() + lifetimeMs - earlyMs,
      afterRejection,
    };
    this.cached = cached;
    return cached;
  }
}

/** A caller's exchanged token, and the latest verified token of theirs to exchange when it must be renewed. */
interface CallerGrant {
  subjectToken: string;
  readonly grant: CachedGrant;
}

/**
 * Per-caller grants of a `token_exchange` upstream: each caller's verified
 * token exchanged for one bound to the upstream, kept per caller (the least
 * recently used beyond `maxCallers` are forgotten).
 */
class CallerGrants {
  private readonly grants = new Map<string, CallerGrant>();

  constructor(
    private readonly client: TokenClient,
    private readonly options: ResolvedTokenExchange,
  ) {}

  forCaller(caller: CallerIdentity | undefined): UpstreamAuthorizer {
    const subjectToken = caller === undefined ? undefined : subjectTokenOf(caller);
    if (caller === undefined || subjectToken === undefined) return new Refused(this.client.upstream);
    const key = JSON.stringify([caller.subject, caller.clientId]);
    let entry = this.grants.get(key);
    if (entry !== undefined) {
      this.grants.delete(key);
      entry.subjectToken = subjectToken;
    } else {
      const created: CallerGrant = {
        subjectToken,
        grant: new CachedGrant(this.client, (target) => ({
          grant_type: TOKEN_EXCHANGE,
          subject_token: created.subjectToken,
          subject_token_type: ACCESS_TOKEN_TYPE,
          requested_token_type: ACCESS_TOKEN_TYPE,
          resource: target.resource,
          ...(this.options.audience === undefined ? {} : { audience: this.options.audience }),
        })),
      };
      entry = created;
      if (this.grants.size >= this.options.maxCallers) {
        const oldest = this.grants.keys().next();
        if (oldest.done !== true) this.grants.delete(oldest.value);
      }
    }
    this.grants.set(key, entry);
    return entry.grant;
  }
}

/** A caller who did not sign in with OAuth has no token to exchange. */
class Refused implements UpstreamAuthorizer {
  constructor(private readonly upstream: string) {}

  authorization(): Promise<string> {
    return Promise.reject(
      new UpstreamAuthError(
        this.upstream,
        `Upstream "${this.upstream}" is reached with each caller's own OAuth grant (token exchange), and this caller did not sign in with OAuth`,
        'Call again signed in with an OAuth token from the gateway’s authorization server.',
      ),
    );
  }

  rejected(): Promise<boolean> {
    return Promise.resolve(false);
  }
}

/**
 * The authorizers an upstream's `auth` describes, for its HTTP endpoint;
 * undefined without `auth`. `per_user` needs the server's vault (`perUser`).
 */
export function createAuthorizers(
  upstream: string,
  url: string | undefined,
  auth: ResolvedUpstreamAuth | undefined,
  clock: Clock,
  perUser?: PerUserContext,
): UpstreamAuthorizers | undefined {
  if (auth === undefined || url === undefined) return undefined;
  const client = new TokenClient(upstream, new URL(url), auth, clock);
  const connection = new CachedGrant(client, (target) => ({
    grant_type: 'client_credentials',
    resource: target.resource,
  }));
  if (auth.type === 'client_credentials') return { connection };
  if (auth.type === 'per_user') {
    if (perUser === undefined)
      throw new SluiceError(
        CoreErrorCode.INVALID_OPTIONS,
        `Invalid import options for upstream "${upstream}": auth: per_user keeps each caller's grant in the credential vault; give the server one (\`credentialVault\`)`,
        { hook: 'import' },
      );
    const grants = new PerUserGrants(client, auth, perUser);
    return { connection, forCaller: (caller) => grants.forCaller(caller) };
  }
  const callers = new CallerGrants(client, auth);
  return { connection, forCaller: (caller) => callers.forCaller(caller) };
}
