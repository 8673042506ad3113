import { z } from 'zod';
import type { CallerIdentity } from '@sluice/core';
import { SluiceError, messageOf } from '@sluice/core';
import type { CredentialVault } from './credential-vault.js';
import type { CredentialSlot, Store } from '@sluice/core';
import type { UpstreamAuthorizer } from './authorizer.js';
import type { TokenClient } from './authorizer.js';
import type { ConsentFlows } from './consent.js';
import { UpstreamAuthError, UpstreamConnectRequired, isUpstreamAuthError } from './errors.js';
import type { ResolvedPerUser } from './options.js';
import type { IssuedToken } from './token-endpoint.js';

/** What `per_user` upstreams need from the server: its vault, its store (locks, consent state) and consent flows. */
export interface PerUserContext {
  readonly vault: CredentialVault;
  readonly store: Store;
  readonly consent: ConsentFlows;
}

/** A token's lifetime when the server does not say: short, so that a revoked grant is noticed. */
const DEFAULT_LIFETIME_SEC = 300;

/** One caller's grant at one upstream, as the vault keeps it (sealed). */
const StoredGrant = z.object({
  accessToken: z.string().min(1).max(16_384),
  refreshToken: z.string().min(1).max(16_384).optional(),
  /** When to replace the access token (ms since the epoch): shortly before it expires. */
  refreshAt: z.number(),
  /** Obtained because the upstream refused the one before: a 401 on it ends the retry. */
  afterRejection: z.boolean().optional(),
});
type StoredGrant = z.infer<typeof StoredGrant>;

const bearer = (grant: StoredGrant): string => `Bearer ${grant.accessToken}`;

/**
 * The grants of one `per_user` upstream: each caller's own, sealed in the
 * vault under their subject, read from it for every request (so a revoked
 * grant is never sent again), and refreshed under a store lock so that
 * replicas do not spend one refresh token twice.
 */
export class PerUserGrants {
  readonly upstream: string;

  constructor(
    readonly client: TokenClient,
    readonly options: ResolvedPerUser,
    private readonly context: PerUserContext,
  ) {
    this.upstream = client.upstream;
    context.consent.register(this);
  }

  forCaller(caller: CallerIdentity | undefined): UpstreamAuthorizer {
    if (caller === undefined) return anonymous(this.upstream);
    const { subject } = caller;
    return {
      authorization: () => this.authorization(subject),
      rejected: (authorization) => this.rejected(subject, authorization),
    };
  }

  /** Redeems an authorization code (with its PKCE verifier) and seals the grant under `subject`. */
  async complete(subject: string, code: string, verifier: string, redirectUri: string): Promise<void> {
    const issued = await this.client.request(
      (target) => ({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
        resource: target.resource,
      }),
      false,
    );
    await this.context.vault.put(this.slot(subject), this.stored(issued, undefined, false));
  }

  private async authorization(subject: string): Promise<string> {
    const grant = await this.read(subject);
    if (grant === undefined) throw await this.connectRequired(subject);
    if (this.client.clock.now() < grant.refreshAt) return bearer(grant);
    return bearer(await this.refresh(subject, grant, false));
  }

  private async rejected(subject: string, authorization: string): Promise<boolean> {
    const grant = await this.read(subject);
    if (grant === undefined) return false;
    // Another request already replaced the refused token: use the new one.
    if (bearer(grant) !== authorization) return true;
    if (grant.afterRejection === true) return false;
    await this.refresh(subject, grant, true);
    return true;
  }

  private slot(subject: string): CredentialSlot {
    return { upstream: this.upstream, subject };
  }

  private async read(subject: string): Promise<StoredGrant | undefined> {
    let value: unknown;
    try {
      value = await this.context.vault.get(this.slot(subject));
    } catch (error) {
      if (!SluiceError.is(error)) throw error;
      throw new UpstreamAuthError(
        this.upstream,
        `The credential vault cannot open this caller's grant for upstream "${this.upstream}"`,
        'Ask the operator to configure the vault key it was sealed with, or to revoke it so that you connect again.',
      );
    }
    if (value === undefined) return undefined;
    const parsed = StoredGrant.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  }

  /** Replaces a stale or refused access token with the refresh token, once per grant across replicas. */
  private async refresh(subject: string, stale: StoredGrant, afterRejection: boolean): Promise<StoredGrant> {
    const admission = await this.context.store.lock(`sluice:upstream-grant:${this.upstream}:${subject}`).acquire();
    try {
      const current = await this.read(subject);
      if (current === undefined) throw await this.connectRequired(subject);
      // Another request or replica refreshed it meanwhile.
      if (current.accessToken !== stale.accessToken) return current;
      const refreshToken = current.refreshToken;
      if (refreshToken === undefined) return await this.forget(subject);
      let issued: IssuedToken;
      try {
        issued = await this.client.request(
          (target) => ({ grant_type: 'refresh_token', refresh_token: refreshToken, resource: target.resource }),
          false,
        );
      } catch (error) {
        if (isUpstreamAuthError(error) && error.oauthError === 'invalid_grant') return await this.forget(subject);
        throw error;
      }
      const next = this.stored(issued, refreshToken, afterRejection);
      // Revoked while the token request ran: the new grant is dropped.
      if ((await this.read(subject)) === undefined) throw await this.connectRequired(subject);
      await this.context.vault.put(this.slot(subject), next);
      return next;
    } finally {
      if (admission.admitted) admission.permit.release();
    }
  }

  /** The grant can no longer be renewed: it leaves the vault and the caller is asked to connect again. */
  private async forget(subject: string): Promise<never> {
    await this.context.vault.revoke(this.slot(subject));
    throw await this.connectRequired(subject);
  }

  private stored(issued: IssuedToken, previousRefresh: string | undefined, afterRejection: boolean): StoredGrant {
    const lifetimeMs = (issued.expiresIn ?? DEFAULT_LIFETIME_SEC) * 1_000;
    const earlyMs = Math.min(this.options.refreshBeforeExpirySec * 1_000, lifetimeMs / 2);
    const refreshToken = issued.refreshToken ?? previousRefresh;
    return {
      accessToken: issued.accessToken,
      ...(refreshToken === undefined ? {} : { refreshToken }),
      refreshAt: this.client.clock.now() + lifetimeMs - earlyMs,
      ...(afterRejection ? { afterRejection } : {}),
    };
  }

  private async connectRequired(subject: string): Promise<UpstreamAuthError> {
    try {
      return new UpstreamConnectRequired(this.upstream, await this.context.consent.ask(this, subject));
    } catch (error) {
      if (isUpstreamAuthError(error)) return error;
      return new UpstreamAuthError(
        this.upstream,
        `Sluice could not start connecting this caller's account at upstream "${this.upstream}" (${messageOf(error)})`,
        'Try again shortly.',
      );
    }
  }
}

/** A caller the listener did not authenticate has no subject to keep a grant under. */
function anonymous(upstream: string): UpstreamAuthorizer {
  return {
    authorization: () =>
      Promise.reject(
        new UpstreamAuthError(
          upstream,
          `Upstream "${upstream}" acts with each caller's own account there, and this caller is anonymous`,
          'Call again authenticated to the gateway (an API key or an OAuth token), then connect your account.',
        ),
      ),
    rejected: () => Promise.resolve(false),
  };
}
