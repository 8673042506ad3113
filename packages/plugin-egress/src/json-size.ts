import { jsonSizeBound } from '@sluice/core';
import { byteLength } from './utf8.js';

// The cheap bound lives in core, which uses it for imported tools' response limits too.
export { jsonSizeBound };

/**
 * The UTF-8 size of a value's JSON, counted without building the JSON: the
 * exact `Buffer.byteLength(JSON.stringify(value))`, or, once the count
 * passes `room`, some count above `room`.
 */

/** Nesting deeper than this is not measured: it counts as infinitely large (a cycle does). */
export const MAX_DEPTH = 1_000;

// Quotes, backslashes, control characters and lone surrogates are written as escapes.
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Below this length the JavaScript loop beats a regular expression and a native call. */
const SHORT = 32;

/** Bytes of `JSON.stringify(text)`, quotes included. */
export function jsonStringSize(text: string, room = Number.POSITIVE_INFINITY): number {
  if (text.length + 2 > room) return text.length + 2;
  if (text.length > SHORT && !NEEDS_ESCAPE.test(text)) return byteLength(text) + 2;
  return escapedSize(text, room);
}

function escapedSize(text: string, room: number): number {
  let bytes = 2;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0x22 || unit === 0x5c) bytes += 2;
    else if (unit < 0x20) bytes += unit === 8 || unit === 9 || unit === 10 || unit === 12 || unit === 13 ? 2 : 6;
    else if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 6; // \udxxx
    } else bytes += 3;
    if (bytes > room) return bytes;
  }
  return bytes;
}

/** The value JSON would write for `value` (after `toJSON` and unboxing), or `undefined` if it writes none. */
export function jsonValueOf(value: unknown, key: string): unknown {
  if (typeof value === 'object' && value !== null) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = (toJSON as (key: string) => unknown).call(value, key);
    if (value instanceof Number) return Number(value);
    if (value instanceof String) return String(value);
    if (value instanceof Boolean) return value.valueOf();
  }
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
  return value;
}

/** Bytes of `JSON.stringify(value)`; 0 when JSON writes nothing for it. */
export function jsonSize(value: unknown, room = Number.POSITIVE_INFINITY, depth = 0): number {
  const v = jsonValueOf(value, '');
  return v === undefined ? 0 : resolvedSize(v, room, depth);
}

/** Measures a value already passed through `jsonValueOf`. */
export function resolvedSize(value: unknown, room: number, depth: number): number {
  switch (typeof value) {
    case 'string':
      return jsonStringSize(value, room);
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'bigint':
      return String(value).length; // JSON.stringify refuses these; the transport fails the call either way
    case 'object':
      if (value === null) return 4;
      if (depth >= MAX_DEPTH) return Number.POSITIVE_INFINITY;
      return Array.isArray(value)
        ? arraySize(value, room, depth + 1)
        : objectSize(value as Record<string, unknown>, room, depth + 1);
    default:
      return 0;
  }
}

/** Sizes one member's value; the default writes it as JSON. */
export type MemberSize = (key: string, value: unknown, room: number, depth: number) => number;

const asJson: MemberSize = (_key, value, room, depth) => resolvedSize(value, room, depth);

/** Bytes of an array's JSON: `[`, items (`null` for those JSON skips), commas, `]`. */
export function arraySize(items: readonly unknown[], room: number, depth: number, item: MemberSize = asJson): number {
  let bytes = 2 + Math.max(0, items.length - 1);
  if (bytes > room) return bytes;
  for (let i = 0; i < items.length && bytes <= room; i++) {
    const v = jsonValueOf(items[i], String(i));
    bytes += v === undefined ? 4 : item(String(i), v, room - bytes, depth);
  }
  return bytes;
}

/** Bytes of an object's JSON: `{`, `"key":value` for each own enumerable key JSON keeps, commas, `}`. */
export function objectSize(
  object: Record<string, unknown>,
  room: number,
  depth: number,
  member: MemberSize = asJson,
): number {
  let bytes = 1;
  let first = true;
  for (const key of Object.keys(object)) {
    const v = jsonValueOf(object[key], key);
    if (v === undefined) continue;
    bytes += (first ? 0 : 1) + jsonStringSize(key) + 1;
    first = false;
    if (bytes > room) return bytes;
    bytes += member(key, v, room - bytes, depth);
    if (bytes > room) return bytes;
  }
  return bytes + 1;
}
