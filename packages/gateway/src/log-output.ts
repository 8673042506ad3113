import type { Writable } from 'node:stream';
import type { Logger } from '@sluice/core';
import { pino } from 'pino';
import type { LogFormat } from './config-schema.js';

/** Where a log line goes: stderr by default, or any stream (the tests read one). */
export interface LogOutputOptions {
  readonly name: string;
  readonly level: string;
  /** JSON lines, readable lines, or (`auto`) readable when the stream is a terminal. */
  readonly format: LogFormat;
  readonly stream?: Writable & { readonly isTTY?: boolean };
}

/** Fields every pino line has, left out of a readable line's key=value tail. */
const FRAME = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);
/** A field's value longer than this is cut in a readable line. */
const MAX_FIELD_CHARS = 200;
/** A readable line longer than this is cut (the JSON format keeps what pino wrote). */
const MAX_LINE_CHARS = 8_000;

const LEVELS: Record<number, { label: string; colour: string }> = {
  10: { label: 'TRACE', colour: '\u001b[90m' },
  20: { label: 'DEBUG', colour: '\u001b[36m' },
  30: { label: 'INFO ', colour: '\u001b[32m' },
  40: { label: 'WARN ', colour: '\u001b[33m' },
  50: { label: 'ERROR', colour: '\u001b[31m' },
  60: { label: 'FATAL', colour: '\u001b[35m' },
};
const RESET = '\u001b[0m';
const DIM = '\u001b[2m';

/** The gateway's logger: JSON lines, or readable coloured lines when the format (or a terminal) asks for them. */
export function createGatewayLogger(options: LogOutputOptions): Logger {
  const stream = options.stream ?? process.stderr;
  const pretty = options.format === 'pretty' || (options.format === 'auto' && stream.isTTY === true);
  const destination = pretty
    ? { write: (line: string) => void stream.write(prettyLine(line, stream.isTTY === true)) }
    : options.stream
      ? { write: (line: string) => void stream.write(line) }
      : pino.destination({ fd: 2, sync: false });
  return pino({ name: options.name, level: options.level }, destination);
}

/**
 * One JSON log line as a readable one: time, level, message, then the other
 * fields as `key=value`, each cut at 200 characters. A line that is not JSON
 * is passed through.
 */
export function prettyLine(json: string, colour: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = LEVELS[Number(record.level)] ?? { label: String(record.level).padEnd(5), colour: '' };
  const time = typeof record.time === 'number' ? new Date(record.time).toISOString().slice(11, 23) : '';
  const fields = Object.entries(record)
    .filter(([key]) => !FRAME.has(key))
    .map(([key, value]) => `${key}=${fieldText(value)}`);
  const paint = (code: string, text: string): string => (colour && code ? `${code}${text}${RESET}` : text);
  const message = typeof record.msg === 'string' ? printable(record.msg) : '';
  const tail = fields.length > 0 ? ` ${paint(DIM, fields.join(' '))}` : '';
  const line = `${paint(DIM, time)} ${paint(level.colour, level.label)} ${message}${tail}`;
  return `${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}\n`;
}

function fieldText(value: unknown): string {
  // The value came out of JSON.parse, so it has a JSON text.
  const text = typeof value === 'string' ? value : (errorText(value) ?? JSON.stringify(value));
  const oneLine = printable(text.replace(/\s*\n\s*/g, ' ⏎ '));
  if (oneLine.length <= MAX_FIELD_CHARS) return oneLine;
  // A cut JSON text reads as broken: a long array or object shows its size (the JSON format keeps it whole).
  if (Array.isArray(value)) return `[${value.length} items]`;
  if (typeof value === 'object' && value !== null && errorText(value) === undefined)
    return `{${Object.keys(value).length} keys}`;
  return `${oneLine.slice(0, MAX_FIELD_CHARS)}…`;
}

/** A serialized error as its type and message (the stack stays in the JSON format). */
function errorText(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || !('message' in value)) return undefined;
  const { type, message } = value as { type?: unknown; message?: unknown };
  return typeof message === 'string' ? `${typeof type === 'string' ? `${type}: ` : ''}${message}` : undefined;
}

/** Control characters (an upstream's text could carry terminal escapes) shown as U+FFFD; newlines kept. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '\ufffd');
}
