import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAX_ARGUMENT_CHARS, chainKey } from '../src/chain-key.js';

const keyOf = (tool: string, args: unknown) => {
  const key = chainKey(tool, args);
  return key.ok ? key.key : `!${key.message}`;
};

describe('the identity of a chained call', () => {
  it('is the same for the same arguments in any key order', () => {
    expect(keyOf('a', { x: 1, y: { b: [1, 2], a: null } })).toBe(keyOf('a', { y: { a: null, b: [1, 2] }, x: 1 }));
  });

  it('differs by tool and by argument value', () => {
    expect(keyOf('a', { x: 1 })).not.toBe(keyOf('b', { x: 1 }));
    expect(keyOf('a', { x: 1 })).not.toBe(keyOf('a', { x: '1' }));
    expect(keyOf('a', { x: [1, 2] })).not.toBe(keyOf('a', { x: [2, 1] }));
  });

  it('refuses cycles, deep nesting and oversized arguments instead of throwing', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(keyOf('a', cyclic)).toBe('!the arguments contain a cycle');
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(keyOf('a', deep)).toMatch(/nested more than 64 levels/);
    expect(keyOf('a', { big: 'x'.repeat(MAX_ARGUMENT_CHARS) })).toMatch(/exceed/);
  });

  it('handles values JSON cannot hold, and getters that throw', () => {
    expect(keyOf('a', { n: 10n, d: new Date(0), f: () => 1 })).toBe(
      `a\u0000{"d":"1970-01-01T00:00:00.000Z","n":"10n"}`,
    );
    const hostile = {
      get boom() {
        throw new Error('no');
      },
    };
    expect(keyOf('a', hostile)).toBe('!the arguments cannot be serialized');
  });

  it('never throws on arbitrary values', () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true }),
        (value) => {
          expect(typeof chainKey('t', value).ok).toBe('boolean');
        },
      ),
      { numRuns: 500 },
    );
  });
});
