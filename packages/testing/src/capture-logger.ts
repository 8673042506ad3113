import type * as Pino from 'pino';
import type { Logger } from '@sluice/core';
import { requireCjs } from '@sluice/core/internal';

/** One parsed pino record. */
export type LogRecord = Record<string, unknown> & { level: number; msg?: string; event?: string };

export interface CapturedLogger {
  readonly logger: Logger;
  /** Every record written so far, parsed. */
  readonly records: LogRecord[];
  /** Records whose `event` field is `name`. */
  events(name: string): LogRecord[];
  /** Every line as written, for asserting that a string never appears. */
  text(): string;
  clear(): void;
}

/**
 * A pino logger that keeps its records in memory, at every level. pino is an optional peer of core, loaded
 * here when a logger is captured (`createTestKit` does), not when `@sluice/testing` is imported: its
 * other helpers, such as `textOf` and `errorOf`, work without it.
 */
export function captureLogger(): CapturedLogger {
  const { pino } = requireCjs('pino') as typeof Pino;
  const records: LogRecord[] = [];
  const lines: string[] = [];
  const logger = pino(
    { level: 'trace' },
    {
      write(line: string) {
        lines.push(line);
        records.push(JSON.parse(line) as LogRecord);
      },
    },
  );
  return {
    logger,
    records,
    events: (name) => records.filter((r) => r.event === name),
    text: () => lines.join(''),
    clear: () => {
      records.length = 0;
      lines.length = 0;
    },
  };
}
