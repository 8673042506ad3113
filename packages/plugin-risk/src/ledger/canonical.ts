import { SluiceError } from '@sluice/core';
import { RiskErrorCode } from '../errors.js';

/** Deeper than any honest tool schema; a bound so that hostile input cannot exhaust memory or time. */
export const MAX_CANONICAL_DEPTH = 128;

type Item = { readonly token: string } | { readonly value: unknown; readonly depth: number };

export interface CanonicalOptions {
  /** Members whose value, when an array of strings, is a set: written sorted (JSON Schema `required`). */
  readonly unordered?: ReadonlySet<string>;
}

/**
 * The canonical JSON text of a value: object keys sorted by UTF-16 code
 * units, no whitespace, numbers and strings as JSON writes them. Two values
 * that differ only in key order give the same text. Iterative, so deep input
 * cannot overflow the stack. Throws `UNHASHABLE_DEFINITION` for anything that
 * is not JSON: strings that are not well-formed UTF-16, non-finite numbers,
 * functions, cycles (through the depth bound).
 */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  const out: string[] = [];
  const stack: Item[] = [{ value, depth: 0 }];
  const unordered = options.unordered ?? NONE;
  while (stack.length > 0) {
    const item = stack.pop() as Item;
    if ('token' in item) out.push(item.token);
    else out.push(scalar(item.value) ?? expand(item.value as object, item.depth, stack, unordered));
  }
  return out.join('');
}

const NONE: ReadonlySet<string> = new Set();

function scalar(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw unhashable(`the number ${String(value)} is not JSON`);
      return JSON.stringify(value);
    case 'string':
      return quote(value);
    case 'object':
      return undefined;
    default:
      throw unhashable(`a ${typeof value} is not JSON`);
  }
}

// Pushes the container's parts (in reverse, as the stack pops) and returns its opening bracket.
function expand(value: object, depth: number, stack: Item[], unordered: ReadonlySet<string>): string {
  if (depth >= MAX_CANONICAL_DEPTH) throw unhashable(`nesting deeper than ${MAX_CANONICAL_DEPTH} levels`);
  const next = depth + 1;
  if (Array.isArray(value)) {
    stack.push({ token: ']' });
    for (let i = value.length - 1; i >= 0; i--) {
      stack.push({ value: value[i], depth: next });
      if (i > 0) stack.push({ token: ',' });
    }
    return '[';
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  stack.push({ token: '}' });
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i] as string;
    const member = record[key];
    stack.push({ value: unordered.has(key) && isStringArray(member) ? [...member].sort() : member, depth: next });
    stack.push({ token: `${i > 0 ? ',' : ''}${quote(key)}:` });
  }
  return '{';
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function quote(text: string): string {
  if (!isWellFormed(text)) throw unhashable('a string is not well-formed UTF-16 (it holds a lone surrogate)');
  return JSON.stringify(text);
}

const nativeWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/** True if the string holds no lone surrogate. */
export function isWellFormed(text: string): boolean {
  if (nativeWellFormed) return nativeWellFormed.call(text);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c > 0xdbff) return false;
    const low = text.charCodeAt(i + 1);
    if (!(low >= 0xdc00 && low <= 0xdfff)) return false;
    i++;
  }
  return true;
}

function unhashable(reason: string): SluiceError {
  return new SluiceError(RiskErrorCode.UNHASHABLE_DEFINITION, `Cannot fingerprint the definition: ${reason}`, {
    plugin: 'risk',
  });
}
