import { MetaKey } from '@sluice/core';
import type { CallToolResult, Logger } from '@sluice/core';

/** Shorter values would blank out ordinary words. */
const MIN_SECRET_LENGTH = 4;
/** A part of a value (`Bearer <token>`) is masked on its own only if it is this long. */
const MIN_PART_LENGTH = 8;
const REDACTED = '[redacted]';
const LOG_METHODS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/**
 * Removes the operator's upstream secrets (header values, tokens,
 * environment values) from text: error results of imported tools, and every
 * line the plugin logs. Empty, it is never consulted.
 */
export class SecretMask {
  private readonly secrets: readonly string[];

  constructor(values: Iterable<string>) {
    const all = new Set<string>();
    for (const value of values) {
      if (value.length >= MIN_SECRET_LENGTH) all.add(value);
      for (const part of value.split(/\s+/)) if (part.length >= MIN_PART_LENGTH) all.add(part);
    }
    // Longest first, so that a secret containing another is masked whole.
    this.secrets = [...all].sort((a, b) => b.length - a.length);
  }

  /** Every value masked, the parts of composite values included. */
  get values(): readonly string[] {
    return this.secrets;
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  readonly text = (text: string): string => {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };

  /** Masks an error result's text in place (it keeps its identity, and so whatever marks it as a refusal). */
  result(result: CallToolResult): CallToolResult {
    if (!result.isError) return result;
    // Upstream results may come without content, whatever the type says.
    const content = result.content as CallToolResult['content'] | undefined;
    for (const block of content ?? []) if (block.type === 'text') block.text = this.text(block.text);
    const error = result._meta?.[MetaKey.ERROR] as { message?: unknown } | undefined;
    if (typeof error?.message === 'string') error.message = this.text(error.message);
    return result;
  }

  /** Every string in a log record's fields, recursively (records are small and built by the plugin). */
  deep(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.text(value);
    if (depth > 8 || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item) => this.deep(item, depth + 1));
    if (value instanceof Error) return this.text(value.message);
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = this.deep(item, depth + 1);
    return out;
  }
}

/**
 * The plugin's logger with every field and message masked. Returned as is
 * when there is nothing to mask, so that logging costs what it did.
 */
export function maskLogger(logger: Logger, mask: SecretMask): Logger {
  if (mask.empty) return logger;
  return new Proxy(logger, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'child')
        return (bindings: object, options?: object) =>
          maskLogger(target.child(mask.deep(bindings) as object, options), mask);
      if (typeof property !== 'string' || !LOG_METHODS.has(property))
        return (value as (...args: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) =>
        (value as (...a: unknown[]) => void).apply(
          target,
          args.map((arg) => mask.deep(arg)),
        );
    },
  });
}
