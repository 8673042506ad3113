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

/** Estimated randomness, in bits, from which a key cannot be guessed online, however long its guessers try. */
export const UNGUESSABLE_KEY_BITS = 128;

/**
 * A conservative estimate of a key's randomness in bits: the bits of the
 * characters it uses, times its length counted in distinct three-character
 * runs, so that repeating a short key does not make it stronger. It cannot
 * see words: a key made of words scores higher than it is worth.
 */
export function keyStrengthBits(key: string): number {
  const characters = Array.from(key); // code points: what a character is to a guesser
  const distinct = new Set(characters).size;
  if (distinct <= 1) return 0;
  const runs = new Set<string>();
  for (let i = 0; i + 3 <= characters.length; i++) runs.add(characters.slice(i, i + 3).join(''));
  return Math.min(characters.length, runs.size + 2) * Math.log2(distinct);
}

/**
 * Whether an `Authorization` value is `Bearer` and one of the configured keys
 * too random to be guessed (`UNGUESSABLE_KEY_BITS`); undefined when no key
 * is. Compared in constant time against every such key. Such a key passes a
 * source the guess throttle refuses: a guesser cannot reach it, so checking it
 * there reopens nothing, and its holder is not kept out by guessers at the
 * same address.
 */
export function unguessableKeys(settings: {
  readonly keys: readonly { readonly key: string }[];
}): ((authorization: string) => boolean) | undefined {
  const digests = settings.keys.filter((k) => keyStrengthBits(k.key) >= UNGUESSABLE_KEY_BITS).map((k) => digest(k.key));
  if (digests.length === 0) return undefined;
  return (authorization) => {
    if (!/^bearer /i.test(authorization)) return false;
    const presented = digest(authorization.slice(7));
    let found = false;
    for (const entry of digests) if (timingSafeEqual(presented, entry)) found = true;
    return found;
  };
}

/** The configured keys under `UNGUESSABLE_KEY_BITS`, with their estimate rounded down: those a guesser can reach. */
export function guessableKeys(
  keys: readonly { readonly name: string; readonly key: string }[],
): { readonly name: string; readonly bits: number }[] {
  return keys
    .map(({ name, key }) => ({ name, bits: Math.floor(keyStrengthBits(key)) }))
    .filter(({ bits }) => bits < UNGUESSABLE_KEY_BITS);
}

/** What the listener's start and `sluice check` say about a guessable key. */
export function guessableKeyWarning(name: string, bits: number): string {
  return (
    `API key ${name} is guessable (about ${bits} bits): while guessers at its caller's address are throttled, ` +
    `it is refused with them; use ${UNGUESSABLE_KEY_BITS} random bits or more (32 random bytes in hex)`
  );
}
