import { hostname } from 'node:os';

/** How a log method is called: fields first (an object, or an Error), then the message; or the message alone. */
export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * What Sluice logs through: the part of pino's `Logger` that core and the
 * plugins use, so that a pino logger passed as `logger` fits as it is, and a
 * server given none gets the small JSON-lines logger below without installing
 * pino.
 */
export interface Logger {
  /** The lowest level written: `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`. */
  level: string;
  isLevelEnabled(level: string): boolean;
  /** A logger that adds `bindings` to every record (`options.level`, if given, is its level). */
  child(bindings: object, options?: object): Logger;
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  /** Writes what is buffered, where the logger buffers (pino's asynchronous destination does). */
  flush?(): void;
}

/** pino's numbers for the levels, which the records carry. */
const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;
type LevelName = keyof typeof LEVELS;

const levelValue = (level: string): number | undefined =>
  Object.hasOwn(LEVELS, level) ? LEVELS[level as LevelName] : undefined;

/** A record longer than this is cut to its level, time, name and message: a log line is never unbounded. */
export const MAX_LOG_LINE_CHARS = 64 * 1024;

/** pino's shape for an Error in a record: its type, message and stack. */
function errorFields(error: Error): Record<string, unknown> {
  return { type: error.name, message: error.message, stack: error.stack };
}

/** JSON.stringify that takes what a log record may hold: Errors, bigints, cycles. */
function serialize(record: Record<string, unknown>): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(record, (_key, value: unknown) => {
    if (typeof value === 'bigint') return value.toString();
    if (value instanceof Error) return errorFields(value);
    if (typeof value === 'object' && value !== null) {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
    }
    return value;
  });
}

type Write = (line: string) => void;

class JsonLogger implements Logger {
  readonly trace: LogFn;
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  readonly fatal: LogFn;
  private threshold: number;

  constructor(
    private current: string,
    private readonly bindings: Record<string, unknown>,
    private readonly write: Write,
  ) {
    this.threshold = levelValue(current) ?? LEVELS.info;
    const method =
      (value: number): LogFn =>
      (fields: unknown, message?: string) =>
        this.log(value, fields, message);
    this.trace = method(LEVELS.trace);
    this.debug = method(LEVELS.debug);
    this.info = method(LEVELS.info);
    this.warn = method(LEVELS.warn);
    this.error = method(LEVELS.error);
    this.fatal = method(LEVELS.fatal);
  }

  get level(): string {
    return this.current;
  }

  set level(level: string) {
    const value = levelValue(level);
    if (value === undefined) throw new Error(`Unknown log level "${level}" (use ${Object.keys(LEVELS).join(', ')})`);
    this.current = level;
    this.threshold = value;
  }

  isLevelEnabled(level: string): boolean {
    const value = levelValue(level);
    return value !== undefined && value >= this.threshold;
  }

  child(bindings: object, options?: object): Logger {
    const child = new JsonLogger(this.current, { ...this.bindings, ...bindings }, this.write);
    const level = (options as { level?: unknown } | undefined)?.level;
    if (typeof level === 'string') child.level = level;
    return child;
  }

  private log(value: number, fields: unknown, message: string | undefined): void {
    if (value < this.threshold) return;
    const head = { level: value, time: Date.now(), pid: process.pid, hostname: host() };
    let record: Record<string, unknown>;
    if (typeof fields === 'string') record = { ...head, ...this.bindings, msg: fields };
    else if (fields instanceof Error)
      record = { ...head, ...this.bindings, err: errorFields(fields), msg: message ?? fields.message };
    else if (typeof fields === 'object' && fields !== null)
      record = { ...head, ...this.bindings, ...fields, ...(message === undefined ? {} : { msg: message }) };
    else record = { ...head, ...this.bindings, ...(message === undefined ? {} : { msg: message }) };
    let line: string;
    try {
      line = serialize(record);
    } catch {
      line = serialize({ ...head, msg: message, unserializable: true });
    }
    if (line.length > MAX_LOG_LINE_CHARS)
      line = serialize({ ...head, name: this.bindings.name, msg: message, truncated: line.length });
    this.write(`${line}\n`);
  }
}

let hostName: string | undefined;
const host = (): string => (hostName ??= hostname());

/**
 * A logger that writes pino-compatible JSON lines (`level`, `time`, `pid`,
 * `hostname`, bindings, fields, `msg`) through `write`, from `level` up.
 */
export function createJsonLogger(options: {
  level?: string;
  bindings?: Record<string, unknown>;
  write: (line: string) => void;
}): Logger {
  const logger = new JsonLogger('info', options.bindings ?? {}, options.write);
  if (options.level !== undefined) logger.level = options.level;
  return logger;
}

/**
 * The default logger writes JSON lines to stderr, never stdout: a server that
 * speaks stdio must keep stdout for protocol messages. The level comes from
 * `SLUICE_LOG_LEVEL` (default `info`). It is built in, so that core needs no
 * logging library: pass a pino logger (or anything with the `Logger` methods)
 * as `logger` to log through it instead.
 */
export function createDefaultLogger(name: string): Logger {
  const level = process.env.SLUICE_LOG_LEVEL ?? 'info';
  return createJsonLogger({
    level: levelValue(level) === undefined ? 'info' : level,
    bindings: { name },
    write: (line) => {
      process.stderr.write(line);
    },
  });
}
