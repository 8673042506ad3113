import type { Logger } from '@sluice/core';
import type { Redis } from 'ioredis';
import { z } from 'zod';

function isRedisClient(value: unknown): value is Redis {
  const client = value as Partial<Redis> | null;
  return (
    typeof client === 'object' &&
    client !== null &&
    typeof client.evalsha === 'function' &&
    typeof client.duplicate === 'function'
  );
}

function isLogger(value: unknown): value is Logger {
  const logger = value as Partial<Logger> | null;
  return (
    typeof logger === 'object' &&
    logger !== null &&
    typeof logger.error === 'function' &&
    typeof logger.warn === 'function'
  );
}

/** Where Redis is: a `redis://` / `rediss://` URL (the store owns that connection), or an ioredis client you own. */
export const RedisConnection = z
  .object({
    url: z
      .string()
      .regex(/^rediss?:\/\/\S+$/, 'use a redis:// or rediss:// URL')
      .optional(),
    client: z.custom<Redis>(isRedisClient, 'expected an ioredis client').optional(),
  })
  .strict()
  .refine(
    (target) => (target.url === undefined) !== (target.client === undefined),
    'give exactly one of url or client',
  );
export type RedisConnection = { readonly url: string } | { readonly client: Redis };

/** What the store does while Redis cannot be reached. */
export const RedisLossPolicy = z.enum(['failClosed', 'failOpen']);
export type RedisLossPolicy = z.output<typeof RedisLossPolicy>;

export const RedisStoreOptions = z
  .object({
    /** Prefix of every key and channel the store uses, so that several deployments can share one Redis. */
    keyPrefix: z
      .string()
      .max(200)
      .default('sluice:')
      .describe('Prefix of every key and channel the store uses, so that several deployments can share one Redis.'),
    /** How long a permit lives unless refreshed (a semaphore's own `leaseMs` wins). Refreshed at 0.8 of it. */
    leaseMs: z
      .number()
      .int()
      .min(100)
      .max(86_400_000)
      .default(10_000)
      .describe("How long a permit lives unless refreshed (a semaphore's own `leaseMs` wins). Refreshed at 0.8 of it."),
    /** `failClosed` refuses guarded calls while Redis is lost; `failOpen` serves them from local memory. */
    onRedisLoss: RedisLossPolicy.default('failClosed').describe(
      '`failClosed` refuses guarded calls while Redis is lost; `failOpen` serves them from local memory.',
    ),
    /** How long operations wait for the first connection before Redis counts as unreachable. */
    connectTimeoutMs: z
      .number()
      .int()
      .min(1)
      .max(600_000)
      .default(5_000)
      .describe('How long operations wait for the first connection before Redis counts as unreachable.'),
    /** Where the store logs (default: JSON lines on stderr). */
    logger: z
      .custom<Logger>(isLogger, 'expected a pino logger')
      .optional()
      .describe('Where the store logs (default: JSON lines on stderr).'),
  })
  .strict();
export type RedisStoreOptions = z.input<typeof RedisStoreOptions>;
export type ResolvedRedisStoreOptions = z.output<typeof RedisStoreOptions>;
