import {
  OAuthError,
  OAuthErrorCode,
  bearerAuthChallengeResponse,
  getOAuthProtectedResourceMetadataUrl,
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/server';
import type { AuthInfo } from '@sluice/core';
import { apiKeyVerifier } from './api-keys.js';
import type { GuessThrottle } from './guess-throttle.js';
import { introspectionVerifier } from './introspection.js';
import { jwtVerifier } from './jwt.js';
import { PlainAnswer } from '../node-front.js';
import type { ListenerAuth, OAuthSettings } from './options.js';

/** An Authorization header longer than this is refused unread. */
export const MAX_AUTHORIZATION_HEADER = 8 * 1024;

/** The listener's authentication step, built once the listener knows its URL. */
export interface AuthGate {
  readonly type: ListenerAuth['type'];
  /**
   * The verified caller, or the 401/403/429 answer to send instead, for the
   * request's `Authorization` header (null when absent). `address` is the
   * client's, for the guess throttle (none: counted as `unknown`).
   */
  authenticate(authorization: string | null, address?: string): Promise<AuthInfo | Response | PlainAnswer | undefined>;
  /**
   * Whether the `Authorization` value would be checked at a source the guess
   * throttle refuses (a configured API key too random to guess, or a token as
   * random admitted before), without checking it.
   */
  passesGuessThrottle(authorization: string): boolean;
  /** The Protected Resource Metadata paths this listener serves (OAuth only). */
  readonly metadataPaths: readonly string[];
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
}

/**
 * `Bearer <token>` exactly: the scheme in any case, one space, one token
 * without whitespace. Trailing spaces and tabs never reach here: HTTP trims
 * them from a header value (RFC 9110 OWS).
 */
const BEARER = /^bearer \S+$/i;

const isJwt = (token: string): boolean => token.split('.').length === 3;

/** Tries the JWT check for JWT-shaped tokens, introspection for the rest. */
function oauthVerifier(settings: OAuthSettings, resource: string): OAuthTokenVerifier {
  const jwt = jwtVerifier(settings, resource);
  const opaque = settings.introspection ? introspectionVerifier(settings.introspection, resource) : undefined;
  return {
    verifyAccessToken(token) {
      if (isJwt(token) || !opaque) return jwt.verifyAccessToken(token);
      return opaque.verifyAccessToken(token);
    },
  };
}

function metadataPaths(endpoint: URL): string[] {
  const root = '/.well-known/oauth-protected-resource';
  const suffixed = new URL(getOAuthProtectedResourceMetadataUrl(endpoint)).pathname;
  return suffixed === root ? [root] : [suffixed, root];
}

/** How a gate reports a refused credential: `refused` after a check, `throttled` refused unchecked. */
export type GuessReport = (outcome: 'refused' | 'throttled', source: string) => void;

/** The answer to a credential refused unchecked because its source guessed too often. */
function throttledResponse(retryAfterSeconds: number): PlainAnswer {
  return new PlainAnswer(
    429,
    { 'content-type': 'application/json', 'retry-after': `${retryAfterSeconds}` },
    JSON.stringify({ error: 'too_many_requests', error_description: 'Too many refused credentials: retry later' }),
  );
}

export function createAuthGate(
  auth: ListenerAuth,
  endpoint: URL,
  guesses?: { readonly throttle: GuessThrottle; readonly report: GuessReport },
): AuthGate {
  if (auth.type === 'none')
    return {
      type: 'none',
      authenticate: () => Promise.resolve(undefined),
      passesGuessThrottle: () => false,
      metadataPaths: [],
      metadata: undefined,
    };
  const resource = auth.type === 'oauth' ? (auth.resource ?? endpoint.href) : endpoint.href;
  const verifier = auth.type === 'oauth' ? oauthVerifier(auth, resource) : apiKeyVerifier(auth);
  const resourceMetadataUrl =
    auth.type === 'oauth' ? getOAuthProtectedResourceMetadataUrl(new URL(resource)) : undefined;
  const requiredScopes = auth.type === 'oauth' ? auth.requiredScopes : [];
  const options = {
    verifier,
    ...(requiredScopes.length > 0 ? { requiredScopes } : {}),
    ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
    ...(auth.type === 'oauth' ? { expectedResource: new URL(resource) } : {}),
  };
  const metadata =
    auth.type === 'oauth'
      ? Object.freeze({
          resource,
          authorization_servers: auth.authorizationServers,
          scopes_supported: auth.scopesSupported ?? requiredScopes,
          bearer_methods_supported: ['header'],
        })
      : undefined;
  const check = async (header: string | null): Promise<AuthInfo | Response | undefined> => {
    try {
      if (header !== null && header.length > MAX_AUTHORIZATION_HEADER)
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'The Authorization header is too long');
      // `Bearer KEY junk` is refused, not read as `KEY`.
      if (header !== null && !BEARER.test(header))
        throw new OAuthError(OAuthErrorCode.InvalidToken, "The Authorization header must be 'Bearer' and one token");
      return await verifyBearerToken(header, options);
    } catch (error) {
      const known = error instanceof OAuthError ? error : new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token');
      return bearerAuthChallengeResponse(known, {
        ...(requiredScopes.length > 0 ? { requiredScopes } : {}),
        ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
      });
    }
  };
  return {
    type: auth.type,
    metadataPaths: auth.type === 'oauth' ? metadataPaths(new URL(resource)) : [],
    metadata,
    passesGuessThrottle: (authorization) => guesses?.throttle.passes(authorization) ?? false,
    async authenticate(header, address) {
      // Only a well-formed credential is a guess: a missing or malformed header cannot be a key, and is refused unchecked.
      const guess = header !== null && header.length <= MAX_AUTHORIZATION_HEADER && BEARER.test(header);
      const admission = guess ? guesses?.throttle.admit(address, header) : undefined;
      if (admission?.kind === 'throttled') {
        guesses?.report('throttled', admission.source);
        return throttledResponse(admission.retryAfterSeconds);
      }
      const verdict = await check(header);
      if (admission !== undefined) {
        const ok = !(verdict instanceof Response);
        admission.settle(ok);
        if (!ok) guesses?.report('refused', admission.source);
      }
      return verdict;
    },
  };
}
