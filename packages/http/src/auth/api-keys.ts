import { createHash, timingSafeEqual } from 'node:crypto';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { authInfoFor } from '@sluice/core/internal';
import type { ApiKeySettings } from './options.js';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** API keys never expire by themselves; the SDK's bearer check wants a time. */
const KEY_LIFETIME_SEC = 365 * 24 * 3600;

/**
 * Verifies static bearer keys. Keys are compared as SHA-256 digests with
 * `timingSafeEqual`, against every configured key, so neither the length nor
 * the content of a guess changes how long the check takes.
 */
export function apiKeyVerifier(settings: ApiKeySettings): OAuthTokenVerifier {
  const keys = settings.keys.map((entry) => ({ ...entry, digest: digest(entry.key) }));
  return {
    verifyAccessToken(token) {
      const presented = digest(token);
      let match: (typeof keys)[number] | undefined;
      for (const entry of keys) if (timingSafeEqual(presented, entry.digest) && !match) match = entry;
      if (!match) return Promise.reject(new OAuthError(OAuthErrorCode.InvalidToken, 'Unknown API key'));
      const identity = {
        method: 'apiKey',
        subject: match.name,
        clientId: match.name,
        keyName: match.name,
        scopes: match.scopes,
      } as const;
      return Promise.resolve(authInfoFor(identity, Math.floor(Date.now() / 1000) + KEY_LIFETIME_SEC));
    },
  };
}
