import type * as Pino from 'pino';
import type { Logger as PinoLogger } from 'pino';
import { requireCjs } from './require-cjs.js';

const { pino } = requireCjs('pino') as typeof Pino;

export type Logger = PinoLogger;

/**
 * The default logger writes JSON lines to stderr, never stdout: a server that
 * speaks stdio must keep stdout for protocol messages. The level comes from
 * `SLUICE_LOG_LEVEL` (default `info`).
 */
export function createDefaultLogger(name: string): Logger {
  const level = process.env.SLUICE_LOG_LEVEL ?? 'info';
  return pino({ name, level }, pino.destination({ fd: 2, sync: false }));
}
