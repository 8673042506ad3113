import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SluiceError, ValueLimits } from '@sluice/core';
import { assertBoundedValue } from '../src/limits.js';

/** `depth` arrays nested in one another, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

const refusal = (run: () => void): SluiceError | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    if (SluiceError.is(error)) return error;
    throw error;
  }
};

describe('the bounds on call arguments and _meta', () => {
  it('accepts nesting up to the limit and refuses one level more with -32602', () => {
    // The object holding `a` is the first level; `nested(n)` adds n - 1 arrays.
    expect(refusal(() => assertBoundedValue({ a: nested(ValueLimits.MAX_DEPTH) }, 'arguments'))).toBeUndefined();
    const error = refusal(() => assertBoundedValue({ a: nested(ValueLimits.MAX_DEPTH + 1) }, 'arguments'));
    expect(error?.rpcCode).toBe(-32602);
    expect(error?.message).toMatch(/arguments is nested too deep/);
  });

  it('refuses a structure thousands deep without overflowing its own stack', () => {
    expect(refusal(() => assertBoundedValue({ a: nested(100_000) }, '_meta'))?.message).toMatch(/_meta/);
  });

  it('refuses more values than the limit, however flat', () => {
    const wide = { list: Array.from({ length: ValueLimits.MAX_NODES }, (_, i) => i) };
    expect(refusal(() => assertBoundedValue(wide, 'arguments'))?.message).toMatch(/more than/);
  });

  it('refuses a value that contains itself instead of walking it forever', () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = [loop];
    expect(refusal(() => assertBoundedValue(loop, 'arguments'))?.message).toMatch(/nested too deep/);
  });

  it('counts the values of objects and arrays alike, and only their own', () => {
    const inherited = Object.create({ hidden: nested(ValueLimits.MAX_DEPTH + 1) }) as Record<string, unknown>;
    inherited.own = 'value';
    expect(refusal(() => assertBoundedValue(inherited, 'arguments'))).toBeUndefined();
    const wide = Object.fromEntries(Array.from({ length: ValueLimits.MAX_NODES }, (_, i) => [`k${i}`, i]));
    expect(refusal(() => assertBoundedValue(wide, '_meta'))?.message).toMatch(/_meta holds more than/);
  });

  it('accepts any JSON within the bounds (fuzzed)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ depthSize: 'medium', maxDepth: 20 }), (value) => {
        expect(refusal(() => assertBoundedValue({ value }, 'arguments'))).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
