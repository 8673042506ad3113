import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { authInfoFor, fetchJsonBounded } from '@sluice/core/internal';
import type { OAuthSettings } from './options.js';

type Introspection = NonNullable<OAuthSettings['introspection']>;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value.slice(0, 256) : undefined;

function audiences(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * Verifies opaque tokens by asking the authorization server (RFC 7662). The
 * answer must say the token is active, name this resource in `aud`, and
 * carry an expiry.
 */
export function introspectionVerifier(config: Introspection, resource: string): OAuthTokenVerifier {
  const basic = Buffer.from(
    `${encodeURIComponent(config.clientId)}:${encodeURIComponent(config.clientSecret)}`,
  ).toString('base64');
  return {
    async verifyAccessToken(token) {
      const answer = await fetchJsonBounded(config.endpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      }).catch(() => {
        throw new OAuthError(OAuthErrorCode.ServerError, 'The authorization server could not be asked about the token');
      });
      const claims = (answer && typeof answer === 'object' ? answer : {}) as Record<string, unknown>;
      if (claims.active !== true) throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token is not active');
      if (typeof claims.exp !== 'number')
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token has no expiry');
      // Required, as on the JWT path: a token that names no audience may be meant for any resource server.
      if (!audiences(claims.aud).includes(resource))
        throw new OAuthError(OAuthErrorCode.InvalidToken, "The access token's aud claim is not accepted here");
      const clientId = text(claims.client_id) ?? text(claims.sub) ?? 'unknown';
      const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean).slice(0, 256) : [];
      const identity = {
        method: 'oauth',
        subject: text(claims.sub) ?? clientId,
        clientId,
        scopes,
        claims: Object.freeze({ ...claims }),
      } as const;
      return authInfoFor(identity, claims.exp, new URL(resource), token);
    },
  };
}
