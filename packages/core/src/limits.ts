import { invalidParams } from './errors.js';

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
 * values than the limits. Iterative, so that the check itself cannot
 * overflow; it stops at the first value past a limit.
 */
export function assertBoundedValue(value: unknown, what: string): void {
  if (typeof value !== 'object' || value === null) return;
  const stack: [unknown, number][] = [[value, 1]];
  let nodes = 0;
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [current, depth] = top;
    if (++nodes > ValueLimits.MAX_NODES)
      throw invalidParams(`${what} holds more than ${ValueLimits.MAX_NODES} values; send less`);
    if (typeof current !== 'object' || current === null) continue;
    if (depth > ValueLimits.MAX_DEPTH)
      throw invalidParams(`${what} is nested too deep: at most ${ValueLimits.MAX_DEPTH} levels are accepted`);
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) stack.push([child, depth + 1]);
  }
}
