import { createHash } from 'node:crypto';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/server';
import type { AuthInfo } from '@sluice/core';
import { authInfoFor, fetchJsonBounded } from '@sluice/core/internal';
import type { OAuthSettings } from './options.js';
import { Backoff } from './backoff.js';

type Introspection = NonNullable<OAuthSettings['introspection']>;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value.slice(0, 256) : undefined;

function audiences(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Answers remembered at once, of each kind; past it, the oldest goes first. */
export const MAX_INTROSPECTION_ANSWERS = 10_000;
/** How long an accepted token is trusted without asking again, at most (never past its `exp`). */
export const INTROSPECTION_POSITIVE_MS = 60_000;
/** How long a refused token is refused without asking again. */
export const INTROSPECTION_NEGATIVE_MS = 10_000;

/** A bounded map of answers that each end at their own time. */
class Answers<T> {
  private readonly entries = new Map<string, { readonly value: T; readonly until: number }>();

  get(key: string, now: number): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: T, until: number): void {
    this.entries.delete(key);
    if (this.entries.size >= MAX_INTROSPECTION_ANSWERS) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, until });
  }
}

const digest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('base64url');

/**
 * Verifies opaque tokens by asking the authorization server (RFC 7662). The
 * answer must say the token is active, name this resource in `aud`, and
 * carry an expiry. Answers are remembered, so the authorization server is
 * not asked once per request: an accepted token for at most
 * `INTROSPECTION_POSITIVE_MS` and never past its `exp`, a refused one for
 * `INTROSPECTION_NEGATIVE_MS`, at most `MAX_INTROSPECTION_ANSWERS` of each
 * (keyed by the token's SHA-256); concurrent requests with one token share
 * one question; while the endpoint fails, it is asked at most once per
 * backoff step (1 s doubling to 60 s).
 */
export function introspectionVerifier(config: Introspection, resource: string): OAuthTokenVerifier {
  const basic = Buffer.from(
    `${encodeURIComponent(config.clientId)}:${encodeURIComponent(config.clientSecret)}`,
  ).toString('base64');
  const accepted = new Answers<AuthInfo>();
  const refused = new Answers<string>();
  const asking = new Map<string, Promise<AuthInfo>>();
  const backoff = new Backoff();
  const unreachable = () =>
    new OAuthError(OAuthErrorCode.ServerError, 'The authorization server could not be asked about the token');

  async function ask(token: string, key: string): Promise<AuthInfo> {
    const answer = await backoff
      .run(
        () =>
          fetchJsonBounded(config.endpoint, {
            method: 'POST',
            headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
          }),
        unreachable,
      )
      .catch(() => {
        throw unreachable();
      });
    const claims = (answer && typeof answer === 'object' ? answer : {}) as Record<string, unknown>;
    const problem = problemOf(claims, resource);
    if (problem !== undefined) {
      refused.set(key, problem, Date.now() + INTROSPECTION_NEGATIVE_MS);
      throw new OAuthError(OAuthErrorCode.InvalidToken, problem);
    }
    const clientId = text(claims.client_id) ?? text(claims.sub) ?? 'unknown';
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean).slice(0, 256) : [];
    const identity = {
      method: 'oauth',
      subject: text(claims.sub) ?? clientId,
      clientId,
      scopes,
      claims: Object.freeze({ ...claims }),
    } as const;
    const exp = claims.exp as number;
    const authInfo = authInfoFor(identity, exp, new URL(resource), token);
    accepted.set(key, authInfo, Math.min(exp * 1000, Date.now() + INTROSPECTION_POSITIVE_MS));
    return authInfo;
  }

  return {
    verifyAccessToken(token) {
      const key = digest(token);
      const now = Date.now();
      const known = accepted.get(key, now);
      if (known) return Promise.resolve(known);
      const refusal = refused.get(key, now);
      if (refusal !== undefined) return Promise.reject(new OAuthError(OAuthErrorCode.InvalidToken, refusal));
      const pending = asking.get(key);
      if (pending) return pending;
      const question = ask(token, key).finally(() => asking.delete(key));
      asking.set(key, question);
      return question;
    },
  };
}

/** Why an introspection answer does not admit the token here, or undefined. */
function problemOf(claims: Record<string, unknown>, resource: string): string | undefined {
  if (claims.active !== true) return 'The access token is not active';
  if (typeof claims.exp !== 'number') return 'The access token has no expiry';
  if (claims.exp * 1000 <= Date.now()) return 'The access token has expired';
  // Required, as on the JWT path: a token that names no audience may be meant for any resource server.
  if (!audiences(claims.aud).includes(resource)) return "The access token's aud claim is not accepted here";
  return undefined;
}
