import { invalidParams } from './errors.js';
import type { SluiceError } from './errors.js';

/**
 * Bounds on the shape of what a caller sends, checked before anything else
 * reads it: a structure nested thousands deep overflows the stack of every
 * recursive reader (validators, serialisers, loggers) later on.
 */
export const ValueLimits = Object.freeze({
  /** The deepest nesting of arrays and objects in `arguments` or `_meta`. */
  MAX_DEPTH: 64,
  /** The most values (objects, arrays, strings, numbers, ...) in `arguments` or `_meta`. */
  MAX_NODES: 200_000,
});

/**
 * Throws INVALID_PARAMS (-32602) when a value nests deeper or holds more
 * values than the limits; it stops at the first value past a limit. It
 * recurses only into objects and arrays, and refuses one deeper than
 * `MAX_DEPTH` before entering it, so it never goes more than `MAX_DEPTH`
 * frames deep itself however deep the value. Every call's arguments and
 * `_meta` pass here: it allocates nothing.
 */
export function assertBoundedValue(value: unknown, what: string): void {
  if (typeof value === 'object' && value !== null) countValues(value, 1, 0, what);
}

/** `counted` plus the values in `value` (an object or array at `depth`, counting itself). */
function countValues(value: object, depth: number, counted: number, what: string): number {
  if (++counted > ValueLimits.MAX_NODES) throw tooMany(what);
  if (depth > ValueLimits.MAX_DEPTH)
    throw invalidParams(`${what} is nested too deep: at most ${ValueLimits.MAX_DEPTH} levels are accepted`);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) counted = countChild(value[i], depth, counted, what);
  } else {
    const record = value as Record<string, unknown>;
    for (const key in record) if (Object.hasOwn(record, key)) counted = countChild(record[key], depth, counted, what);
  }
  return counted;
}

function countChild(child: unknown, depth: number, counted: number, what: string): number {
  if (typeof child === 'object' && child !== null) return countValues(child, depth + 1, counted, what);
  if (++counted > ValueLimits.MAX_NODES) throw tooMany(what);
  return counted;
}

function tooMany(what: string): SluiceError {
  return invalidParams(`${what} holds more than ${ValueLimits.MAX_NODES} values; send less`);
}
