/** Nesting deeper than this is not bounded: it counts as infinitely large (a cycle does). */
const MAX_DEPTH = 1_000;
/** The widest any string's JSON gets per code unit: a control character as `\u00XX`. */
const WIDEST_ESCAPE = 6;
/** The longest a number's JSON gets: `-1.7976931348623157e+308`. */
const WIDEST_NUMBER = 24;

/**
 * An upper bound on the UTF-8 bytes of `JSON.stringify(value)`, found
 * without looking inside a single string: 6 bytes per code unit, 24 per
 * number, punctuation counted generously. Anything it cannot bound that way
 * (an object that is not plain, a `toJSON`, a bigint, deep nesting) makes it
 * infinite. Stops once past `room`. A value whose bound is within a limit
 * needs no exact count.
 */
export function jsonSizeBound(value: unknown, room = Number.POSITIVE_INFINITY, depth = 0): number {
  switch (typeof value) {
    case 'string':
      return WIDEST_ESCAPE * value.length + 2;
    case 'number':
      return WIDEST_NUMBER;
    case 'boolean':
    case 'undefined':
    case 'function':
    case 'symbol':
      return 5; // true, false, null, or nothing at all
    case 'object':
      if (value === null) return 4;
      if (depth >= MAX_DEPTH || !isPlain(value)) return Number.POSITIVE_INFINITY;
      return Array.isArray(value)
        ? arrayBound(value, room, depth + 1)
        : objectBound(value as Record<string, unknown>, room, depth + 1);
    default:
      return Number.POSITIVE_INFINITY;
  }
}

function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) return false;
  return typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

function arrayBound(items: readonly unknown[], room: number, depth: number): number {
  let bytes = 2 + items.length;
  for (let i = 0; i < items.length && bytes <= room; i++) bytes += jsonSizeBound(items[i], room - bytes, depth);
  return bytes;
}

function objectBound(object: Record<string, unknown>, room: number, depth: number): number {
  let bytes = 2;
  // for...in sees inherited enumerable keys too: they only make the bound larger.
  for (const key in object) {
    bytes += WIDEST_ESCAPE * key.length + 4 + jsonSizeBound(object[key], room - bytes, depth);
    if (bytes > room) return bytes;
  }
  return bytes;
}
