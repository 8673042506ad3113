import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SluiceError } from '@sluice/core';
import { MAX_KEY_PART, actionKeyOf } from '../src/action-key.js';

const scalar = fc.oneof(
  fc.string({ maxLength: 600 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);

describe('the action key', () => {
  it('is the tool name alone when no argument is chosen', () => {
    const keyOf = actionKeyOf('billing.refund', []);
    expect(keyOf({ invoiceId: 'a' })).toBe(keyOf({ invoiceId: 'b' }));
  });

  it('is deterministic, bounded, and tells distinct string values apart', () => {
    const keyOf = actionKeyOf('t', ['a', 'b']);
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), fc.string({ maxLength: 2000 }), scalar, (x, y, b) => {
        const kx = keyOf({ a: x, b });
        expect(keyOf({ b, a: x })).toBe(kx);
        expect(kx.length).toBeLessThan(2 * (MAX_KEY_PART * 6 + 80));
        if (x !== y) expect(keyOf({ a: y, b })).not.toBe(kx);
      }),
    );
  });

  it('locks 1 and "1" as the same action, and an absent argument as null', () => {
    const keyOf = actionKeyOf('t', ['id']);
    expect(keyOf({ id: 1 })).toBe(keyOf({ id: '1' }));
    expect(keyOf({ id: true })).toBe(keyOf({ id: 'true' }));
    expect(keyOf({})).toBe(keyOf({ id: null }));
    expect(keyOf({})).not.toBe(keyOf({ id: 'null' }));
  });

  it('reads only own fields, so "__proto__" and inherited names are absent', () => {
    const keyOf = actionKeyOf('t', ['__proto__', 'toString']);
    expect(keyOf(JSON.parse('{"x":1}') as Record<string, unknown>)).toBe(keyOf({}));
    expect(keyOf(JSON.parse('{"__proto__":"p"}') as Record<string, unknown>)).not.toBe(keyOf({}));
  });

  it('refuses any non-scalar key argument with -32602, whatever the rest of the arguments hold', () => {
    const keyOf = actionKeyOf('t', ['id']);
    const nonScalar = fc.oneof(
      fc.object(),
      fc.array(fc.anything()),
      fc.constant(Number.NaN),
      fc.constant(Number.POSITIVE_INFINITY),
    );
    fc.assert(
      fc.property(nonScalar, fc.dictionary(fc.string(), fc.anything()), (id, rest) => {
        let thrown: unknown;
        try {
          keyOf({ ...rest, id });
        } catch (error) {
          thrown = error;
        }
        expect(SluiceError.is(thrown) && thrown.rpcCode).toBe(-32602);
      }),
    );
  });

  it('gives a remembered value the key it would build afresh, also once the memory is full', () => {
    const spec = (v: string | number | boolean | null) => {
      if (v === null) return 'sluice/concurrency/lock/t/~';
      const text = String(v);
      return text.length > MAX_KEY_PART ? undefined : `sluice/concurrency/lock/t/${text.length}:${text}`;
    };
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: 0, max: 3000 }), fc.boolean(), fc.constant(null)),
          { minLength: 1, maxLength: 3000 },
        ),
        (values) => {
          const keyOf = actionKeyOf('t', ['a']);
          for (const v of [...values, ...values]) expect(keyOf({ a: v })).toBe(spec(v));
        },
      ),
      { numRuns: 20 },
    );
  });

  it('never throws for any scalar arguments', () => {
    const keyOf = actionKeyOf('t', ['a']);
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.anything()), scalar, (rest, a) => void keyOf({ ...rest, a })));
  });
});
