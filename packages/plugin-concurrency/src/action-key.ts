import type * as Crypto from 'node:crypto';
import nodeModule from 'node:module';
import { invalidParams } from '@sluice/core';

/** The store keys of this plugin share one prefix, so a shared store can hold them beside others. */
export const KEY_PREFIX = 'sluice/concurrency/';

/** Longer string values enter a lock key as their SHA-256, so keys stay short. */
export const MAX_KEY_PART = 256;

// node:crypto (and the streams it loads) comes with the first long key value, not with the plugin: importing it is
// part of every adopter's start-up, and most keys are short. `__filename` names this file in the CommonJS build,
// whose `import.meta` is empty; the ESM build reads `import.meta.url` first (imported from `node -e`, it sees a
// global `__filename` of "[eval]").
let crypto: typeof Crypto | undefined;
function sha256Hex(text: string): string {
  const url = (import.meta as { url?: string }).url;
  crypto ??= nodeModule.createRequire(typeof url === 'string' && url !== '' ? url : __filename)(
    'node:crypto',
  ) as typeof Crypto;
  return crypto.createHash('sha256').update(text).digest('hex');
}

/**
 * One argument's share of a lock key, self-delimiting so that distinct
 * values give distinct keys: a string as `length:text`, an absent value as
 * `~`, a long string as `#` and its SHA-256. Numbers and booleans become
 * strings, so `1` and `"1"` lock the same action: an upstream may read
 * either as the same invoice, and a coarser key only ever serializes more.
 */
function keyPart(tool: string, field: string, value: unknown): string {
  if (value === undefined || value === null) return '~';
  if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
  else if (typeof value === 'boolean') value = String(value);
  if (typeof value !== 'string') {
    throw invalidParams(
      `Argument "${field}" of tool "${tool}" is part of its lock key and must be a string, a finite number or a boolean`,
    );
  }
  if (value.length > MAX_KEY_PART) return `#${sha256Hex(value)}`;
  return `${value.length}:${value}`;
}

/**
 * Builds the function that names the action a call performs: the tool's
 * name plus the chosen argument fields. Distinct values give distinct keys,
 * and a key's length is bounded whatever the arguments. Malformed key
 * arguments are a -32602.
 */
export function actionKeyOf(tool: string, keyArgs: readonly string[]): (args: Record<string, unknown>) => string {
  const base = `${KEY_PREFIX}lock/${tool}`;
  if (keyArgs.length === 0) return () => base;
  const build = (args: Record<string, unknown>): string => {
    let key = base;
    for (const field of keyArgs)
      key += `/${keyPart(tool, field, Object.hasOwn(args, field) ? args[field] : undefined)}`;
    return key;
  };
  const [only] = keyArgs;
  return keyArgs.length === 1 && only !== undefined ? cached(only, build) : build;
}

/** Most recent values of a single key argument, remembered with their keys. */
const CACHE_SIZE = 1024;

/**
 * Hands out the same key string for the same value of a single key
 * argument: a string the store has hashed once is found again at once,
 * where a freshly built one costs a copy and a hash on every call. Long
 * values are not kept, so the cache holds at most `CACHE_SIZE` short strings.
 */
function cached(
  field: string,
  build: (args: Record<string, unknown>) => string,
): (args: Record<string, unknown>) => string {
  const keys = new Map<unknown, string>();
  return (args) => {
    const value = Object.hasOwn(args, field) ? args[field] : undefined;
    const known = keys.get(value);
    if (known !== undefined) return known;
    const key = build(args);
    if (typeof value === 'string' && value.length > MAX_KEY_PART) return key;
    if (keys.size >= CACHE_SIZE) keys.clear();
    keys.set(value, key);
    return key;
  };
}
