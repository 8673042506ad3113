import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MAX_DEPTH, jsonSize, jsonSizeBound, jsonStringSize } from '../src/json-size.js';

/** JSON.stringify typed as it behaves: undefined for undefined, functions and symbols. */
const stringify = (value: unknown): string | undefined => JSON.stringify(value);
const wire = (value: unknown): number => Buffer.byteLength(stringify(value) ?? '', 'utf8');

describe('the size of a value as JSON', () => {
  it('equals the UTF-8 bytes of JSON.stringify for any JSON value, escapes and lone surrogates included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        expect(jsonSize(value)).toBe(wire(value));
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), (text) => {
        expect(jsonStringSize(text)).toBe(wire(text));
        expect(jsonStringSize(text.repeat(4))).toBe(wire(text.repeat(4)));
      }),
    );
  });

  it('bounds the size from above without reading strings, and gives up on what is not plain data', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBoxedValues: true,
          withDate: true,
          withMap: true,
          withNullPrototype: true,
          withSparseArray: true,
          withObjectString: true,
        }),
        (value) => {
          let wireSize: number;
          try {
            wireSize = wire(value);
          } catch {
            return; // JSON.stringify refuses it (a bigint): nothing to bound
          }
          expect(jsonSizeBound(value)).toBeGreaterThanOrEqual(wireSize);
        },
      ),
    );
    expect(jsonSizeBound({ at: new Date(0) })).toBe(Number.POSITIVE_INFINITY);
    expect(jsonSizeBound({ toJSON: () => 'x'.repeat(100) })).toBe(Number.POSITIVE_INFINITY);
    expect(jsonSizeBound({ text: 'x'.repeat(100) }, 50)).toBeGreaterThan(50);
  });

  it('follows what JSON.stringify skips, nulls and converts', () => {
    const odd = {
      skipped: undefined,
      fn: () => 1,
      sym: Symbol('s'),
      list: [undefined, () => 1, Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21],
      when: new Date(0),
      boxed: [new String('s'), new Number(2), new Boolean(false)],
      custom: { toJSON: () => ({ replaced: 'é' }) },
      controls: '\u0000\u0008\t\n\u000b\f\r\u001f"\\\u2028\u007f',
    };
    expect(jsonSize(odd)).toBe(wire(odd));
    expect(jsonSize(undefined)).toBe(0);
  });

  it('stops once past the room it is given, without visiting the rest', () => {
    let visited = 0;
    const rows = Array.from({ length: 1_000 }, () => ({
      get text() {
        visited++;
        return 'row'.repeat(10);
      },
    }));
    expect(jsonSize(rows, 5_000)).toBeGreaterThan(5_000);
    expect(visited).toBeGreaterThan(0);
    expect(visited).toBeLessThan(200);
    expect(jsonSize(rows)).toBe(wire(rows));
  });

  it('counts a cycle, or nesting deeper than MAX_DEPTH, as infinite instead of overflowing the stack', () => {
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle.self = cycle;
    expect(jsonSize(cycle)).toBe(Number.POSITIVE_INFINITY);
    let deep: unknown = 'bottom';
    for (let i = 0; i < MAX_DEPTH + 5; i++) deep = [deep];
    expect(jsonSize(deep)).toBe(Number.POSITIVE_INFINITY);
  });
});
