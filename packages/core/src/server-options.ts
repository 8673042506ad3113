import type { ServerOptions as SdkServerOptions } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import type { Plugin } from './plugin.js';
import type { Store } from './store/types.js';

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
  /** Shown to clients at initialization. */
  instructions?: string;
  /** How long `close()` waits for running calls before closing anyway. Default 10 s. */
  drainTimeoutMs?: number;
  /**
   * Options passed to every SDK server instance: request-state verification
   * and the input-required knobs of 2026-07-28, cache hints, the JSON Schema
   * validator for elicitation answers.
   */
  sdk?: Pick<SdkServerOptions, 'requestState' | 'inputRequired' | 'cacheHints' | 'jsonSchemaValidator'>;
}

export const ServerOptionsSchema = z.object({
  name: z.string().min(1),
  version: z.string().min(1),
  plugins: z.array(z.unknown()).optional(),
  logger: z.unknown().optional(),
  store: z.unknown().optional(),
  clock: z.unknown().optional(),
  instructions: z.string().optional(),
  drainTimeoutMs: z.number().int().nonnegative().optional(),
  sdk: z.record(z.string(), z.unknown()).optional(),
});

/** What `server.call()` accepts. */
export interface InProcessCallOptions {
  /** `_meta` for the call, as a client would send it. */
  meta?: Record<string, unknown>;
  signal?: AbortSignal;
}
