import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/server';
import type { AuthInfo, CallerIdentity } from '@sluice/core';
import { authInfoFor, fetchBounded, fetchJsonBounded } from '@sluice/core/internal';
import type { OAuthSettings } from './options.js';
import { Backoff } from './backoff.js';

/** How long a fetched key set is trusted before it is fetched again. */
const JWKS_MAX_AGE_MS = 10 * 60_000;

/** Verified tokens remembered at once; a client reuses its token for many calls. */
const VERIFIED_CACHE_ENTRIES = 1_000;
/** Longer tokens are verified every time rather than remembered. */
const MAX_CACHED_TOKEN_LENGTH = 4_096;

type Jose = typeof import('jose');
let jose: Promise<Jose> | undefined;
// Loaded on first use, so a server without OAuth never pays for it.
const loadJose = (): Promise<Jose> => (jose ??= import('jose'));

function scopesOf(payload: Record<string, unknown>): string[] {
  const { scope, scp } = payload;
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean).slice(0, 256);
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string').slice(0, 256);
  return [];
}

function stringClaim(payload: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = payload[name];
    if (typeof value === 'string' && value.length > 0) return value.slice(0, 256);
  }
  return undefined;
}

/** Finds the key set's address from the issuer's metadata (RFC 8414, then OpenID). */
async function discoverJwksUri(issuer: string): Promise<string> {
  const base = issuer.replace(/\/$/, '');
  const candidates = [`${base}/.well-known/oauth-authorization-server`, `${base}/.well-known/openid-configuration`];
  for (const url of candidates) {
    const metadata = await fetchJsonBounded(url).catch(() => undefined);
    const jwksUri =
      metadata && typeof metadata === 'object' ? (metadata as { jwks_uri?: unknown }).jwks_uri : undefined;
    if (typeof jwksUri === 'string') return jwksUri;
  }
  throw new OAuthError(OAuthErrorCode.ServerError, 'The authorization server publishes no jwks_uri');
}

/**
 * Verifies JWT access tokens against the authorization server's keys: the
 * signature (from an algorithm allow-list), issuer, audience (this server's
 * resource URI, RFC 8707), expiry and not-before with a bounded clock skew.
 * The key set is cached and refetched when a token names an unknown key.
 */
export function jwtVerifier(settings: OAuthSettings, resource: string): OAuthTokenVerifier {
  const issuer = settings.issuer ?? settings.authorizationServers[0];
  // The options schema asks for at least one server; settings built by hand may not have one.
  if (issuer === undefined) throw new Error('OAuth settings name no issuer and no authorization server');
  // jose records each fetch of the key set here: `uat` tells when the keys last changed hands.
  const fetched: { uat?: number; jwks?: { keys: { kid?: string }[] } } = {};
  const verified = new VerifiedTokens(fetched);
  // One backoff for discovery and the key set: while the authorization server fails, it is asked at most once per wait.
  const backoff = new Backoff();
  const unavailable = () => new OAuthError(OAuthErrorCode.InvalidToken, 'The access token could not be verified');
  let keySet: Promise<ReturnType<Jose['createRemoteJWKSet']>> | undefined;
  const keys = () =>
    (keySet ??= (async () => {
      const { createRemoteJWKSet, customFetch, jwksCache } = await loadJose();
      const uri = settings.jwksUri ?? (await backoff.run(() => discoverJwksUri(issuer), unavailable));
      return createRemoteJWKSet(new URL(uri), {
        cacheMaxAge: JWKS_MAX_AGE_MS,
        cooldownDuration: settings.jwksRefreshCooldownSec * 1000,
        [jwksCache]: fetched as Record<string, never>,
        [customFetch]: (url: string, init: RequestInit) =>
          backoff.run(
            () => fetchBounded(url, init),
            unavailable,
            (response) => !response.ok,
          ),
      });
    })().catch((error: unknown) => {
      keySet = undefined; // try discovery again on the next request (after the backoff)
      throw error;
    }));
  return {
    async verifyAccessToken(token) {
      const known = verified.get(token);
      if (known) return known;
      const { jwtVerify, errors, decodeJwt, decodeProtectedHeader } = await loadJose();
      // A token that cannot be one of ours is refused before anything is fetched for it.
      const problem = notOurs(token, { decodeJwt, decodeProtectedHeader }, settings, issuer, resource);
      if (problem !== undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, problem);
      try {
        const { payload, protectedHeader } = await jwtVerify(token, await keys(), {
          issuer,
          audience: resource,
          algorithms: settings.algorithms,
          clockTolerance: settings.clockToleranceSec,
          requiredClaims: ['exp'],
        });
        const clientId = stringClaim(payload, 'client_id', 'azp') ?? stringClaim(payload, 'sub') ?? 'unknown';
        const identity: CallerIdentity = {
          method: 'oauth',
          subject: stringClaim(payload, 'sub') ?? clientId,
          clientId,
          scopes: scopesOf(payload),
          claims: Object.freeze({ ...payload }),
        };
        // The leeway is applied once, here (jose checked `exp` with it): the expiry handed on is when this server
        // stops accepting the token, so that the SDK's own later check does not refuse it inside the leeway.
        const authInfo = authInfoFor(
          identity,
          (payload.exp ?? 0) + settings.clockToleranceSec,
          new URL(resource),
          token,
        );
        verified.set(token, authInfo, protectedHeader.kid);
        return authInfo;
      } catch (error) {
        if (error instanceof OAuthError) throw error;
        if (error instanceof errors.JOSEError) throw new OAuthError(OAuthErrorCode.InvalidToken, tokenProblem(error));
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token could not be verified');
      }
    },
  };
}

/**
 * Why a token cannot verify here, read from its unverified header and claims:
 * not a JWT, an algorithm not accepted, another issuer or audience, expired.
 * These alone never accept a token: they only spare the key set a fetch.
 */
function notOurs(
  token: string,
  jose: Pick<Jose, 'decodeJwt' | 'decodeProtectedHeader'>,
  settings: OAuthSettings,
  issuer: string,
  resource: string,
): string | undefined {
  let header: { alg?: unknown };
  let claims: Record<string, unknown>;
  try {
    header = jose.decodeProtectedHeader(token);
    claims = jose.decodeJwt(token);
  } catch {
    return 'The access token is invalid';
  }
  if (typeof header.alg !== 'string' || !(settings.algorithms as readonly string[]).includes(header.alg))
    return 'The access token is signed with an algorithm this server does not accept';
  if (claims.iss !== issuer) return "The access token's iss claim is not accepted here";
  const aud = claims.aud;
  if (!(aud === resource || (Array.isArray(aud) && aud.includes(resource))))
    return "The access token's aud claim is not accepted here";
  if (typeof claims.exp !== 'number') return "The access token's exp claim is not accepted here";
  if (claims.exp + settings.clockToleranceSec <= Date.now() / 1000) return 'The access token has expired';
  return undefined;
}

interface Verified {
  readonly authInfo: AuthInfo;
  readonly kid: string | undefined;
  readonly expiresAt: number;
  /** The key-set fetch this verification was checked against. */
  uat: number | undefined;
}

/**
 * Remembers tokens whose signature and claims were verified, so a client
 * that reuses its token does not pay for a signature check per call. A
 * remembered token is trusted only while it has not expired, the key set is
 * fresh, and its key is still in the set: a key rotated out (seen on the
 * next fetch, which a token naming a new key triggers) ends it at once.
 */
class VerifiedTokens {
  private readonly entries = new Map<string, Verified>();

  constructor(
    // `expiresAt` already carries the clock leeway.
    private readonly fetched: { uat?: number; jwks?: { keys: { kid?: string }[] } },
  ) {}

  get(token: string): AuthInfo | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    const now = Date.now();
    const { uat } = this.fetched;
    const stale = uat === undefined || now - uat >= JWKS_MAX_AGE_MS || now / 1000 > entry.expiresAt;
    if (!stale && entry.uat !== uat) {
      // The keys were fetched again since: still valid only if its key survived.
      if (this.fetched.jwks?.keys.some((key) => key.kid === entry.kid)) entry.uat = uat;
      else return void this.entries.delete(token);
    }
    if (stale) return void this.entries.delete(token);
    return entry.authInfo;
  }

  set(token: string, authInfo: AuthInfo, kid: string | undefined): void {
    if (token.length > MAX_CACHED_TOKEN_LENGTH || authInfo.expiresAt === undefined) return;
    if (this.entries.size >= VERIFIED_CACHE_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(token, { authInfo, kid, expiresAt: authInfo.expiresAt, uat: this.fetched.uat });
  }
}

/** A short reason for the challenge, never echoing the token. */
function tokenProblem(error: { code: string; claim?: string }): string {
  switch (error.code) {
    case 'ERR_JWT_EXPIRED':
      return 'The access token has expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return `The access token's ${error.claim ?? 'claims'} claim is not accepted here`;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'The access token is signed with an algorithm this server does not accept';
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return 'The access token is signed with an unknown key';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'The access token signature is invalid';
    default:
      return 'The access token is invalid';
  }
}
