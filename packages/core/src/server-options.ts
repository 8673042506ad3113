import type { ServerOptions as SdkServerOptions } from '@modelcontextprotocol/server';
import { z } from 'zod/v4';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { Plugin } from './plugin.js';
import type { AuditOptions } from './audit.js';
import type { Store } from './store/types.js';
import type { CredentialVault } from './upstreaming.js';

export interface ServerOptions {
  name: string;
  version: string;
  /** Applied in order at construction; a bad plugin or ordering reference throws here. */
  plugins?: readonly Plugin[];
  /** Default: pino JSON lines on stderr, level from `SLUICE_LOG_LEVEL`. */
  logger?: Logger;
  /** Default: the in-memory store. */
  store?: Store;
  /** Default: the system clock. */
  clock?: Clock;
  /**
   * Where upstream grants are sealed (AES-256-GCM): needed by `per_user`
   * upstreams, whose consent page (`/oauth/upstream/connect`) and callback
   * (`/oauth/upstream/callback`) every `listen()` then serves. Build it over
   * the same store: `new CredentialVault(store.credentials, { keys })` of `@sluice/upstream`.
   */
  credentialVault?: CredentialVault;
  /** The audit log's retention (`maxEntries`, default 100 000), kept in the store; see `@sluice/audit`. */
  audit?: AuditOptions;
  /** Shown to clients at initialization. */
  instructions?: string;
  /** How long `close()` waits for running calls before closing anyway. Default 10 s. */
  drainTimeoutMs?: number;
  /**
   * The key (at least 32 bytes) that seals the wrapper Sluice puts around an
   * upstream's 2026-07-28 `requestState` between the rounds of an
   * input-required call. Give every replica behind one load balancer the same
   * one, so that a retry may reach any of them. Default: a random key per
   * process, so the retry must reach the replica that sealed the state.
   */
  roundStateSecret?: string;
  /**
   * Options passed to every SDK server instance: request-state verification
   * and the input-required knobs of 2026-07-28, cache hints, the JSON Schema
   * validator for elicitation answers.
   */
  sdk?: Pick<SdkServerOptions, 'requestState' | 'inputRequired' | 'cacheHints' | 'jsonSchemaValidator'>;
}

/** The shortest `roundStateSecret` accepted: an HMAC-SHA256 key of fewer bytes is weaker than the hash. */
export const MIN_ROUND_STATE_SECRET_BYTES = 32;

export const ServerOptionsSchema = z.object({
  name: z.string().min(1),
  version: z.string().min(1),
  plugins: z.array(z.unknown()).optional(),
  logger: z.unknown().optional(),
  store: z.unknown().optional(),
  clock: z.unknown().optional(),
  credentialVault: z.unknown().optional(),
  audit: z.unknown().optional(),
  instructions: z.string().optional(),
  drainTimeoutMs: z.number().int().nonnegative().optional(),
  roundStateSecret: z
    .string()
    .refine((value) => Buffer.byteLength(value, 'utf8') >= MIN_ROUND_STATE_SECRET_BYTES, {
      message: `must be at least ${MIN_ROUND_STATE_SECRET_BYTES} bytes`,
    })
    .optional(),
  sdk: z.record(z.string(), z.unknown()).optional(),
});

/** What `server.call()` accepts. */
export interface InProcessCallOptions {
  /** `_meta` for the call, as a client would send it. */
  meta?: Record<string, unknown>;
  signal?: AbortSignal;
}
