import { SluiceError } from '@sluice/core';

/** Every code the Redis store raises. */
export const RedisStoreErrorCode = Object.freeze({
  /** Redis cannot be reached (at start, or lost mid-run) and the store fails closed. */
  REDIS_UNAVAILABLE: 'REDIS_UNAVAILABLE',
  /** Redis answered a command with an error: a bug or a misconfigured server, never a policy. */
  REDIS_COMMAND_FAILED: 'REDIS_COMMAND_FAILED',
  /** A value given to `set`/`setIfAbsent` cannot be stored as JSON. */
  INVALID_VALUE: 'INVALID_VALUE',
  /** The store was closed; nothing more can be asked of it. */
  STORE_CLOSED: 'STORE_CLOSED',
} as const);

export type RedisStoreErrorCode = (typeof RedisStoreErrorCode)[keyof typeof RedisStoreErrorCode];

/** The name errors are attributed to (`SluiceError.plugin`). */
export const STORE_NAME = 'store-redis';

/**
 * The store cannot reach Redis. The message reaches clients, so it names
 * neither the address nor the reason (which may quote the address); the
 * `store.redis.lost` log line says where and why.
 */
export function redisUnavailable(cause?: unknown): SluiceError {
  return new SluiceError(
    RedisStoreErrorCode.REDIS_UNAVAILABLE,
    'The shared store is unavailable; it fails closed, so guarded calls are refused until it is back',
    { plugin: STORE_NAME, cause },
  );
}

export function commandFailed(command: string, cause: unknown): SluiceError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new SluiceError(RedisStoreErrorCode.REDIS_COMMAND_FAILED, `Redis refused ${command}: ${detail}`, {
    plugin: STORE_NAME,
    cause,
  });
}

export function storeClosed(): SluiceError {
  return new SluiceError(RedisStoreErrorCode.STORE_CLOSED, 'The Redis store is closed', { plugin: STORE_NAME });
}

/**
 * A reply error means Redis got the command and said no; anything else
 * (refused, reset, timed out, not writable) means we could not talk to it.
 */
export function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}
