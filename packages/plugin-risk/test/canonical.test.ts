import { describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/core';
import { RiskErrorCode } from '@sluice/plugin-risk';
import { MAX_CANONICAL_DEPTH, canonicalJson, isWellFormed } from '../src/ledger/canonical.js';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return SluiceError.is(error) ? error.code : 'not a SluiceError';
  }
};

describe('canonical JSON', () => {
  it('sorts object keys at every level and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}',
    );
  });

  it('gives one text for two objects that differ only in key order', () => {
    const one = {
      name: 'n',
      inputSchema: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] },
    };
    const two = {
      inputSchema: { required: ['a'], properties: { b: { type: 'number' }, a: { type: 'string' } }, type: 'object' },
      name: 'n',
    };
    expect(canonicalJson(one)).toBe(canonicalJson(two));
  });

  it('keeps array order, which is meaningful', () => {
    expect(canonicalJson(['a', 'b'])).not.toBe(canonicalJson(['b', 'a']));
  });

  it('orders keys by UTF-16 code units', () => {
    expect(canonicalJson({ '\u00e9': 1, z: 2, Z: 3, '\u{1F600}': 4, '\uFF61': 5 })).toBe(
      '{"Z":3,"z":2,"\u00e9":1,"\u{1F600}":4,"\uFF61":5}',
    );
  });

  it('writes members named as unordered sets sorted, when they hold strings', () => {
    const options = { unordered: new Set(['required']) };
    expect(canonicalJson({ required: ['b', 'a'] }, options)).toBe(canonicalJson({ required: ['a', 'b'] }, options));
    expect(canonicalJson({ required: ['b', 'a'] })).not.toBe(canonicalJson({ required: ['a', 'b'] }));
    expect(canonicalJson({ required: [2, 1] }, options)).toBe('{"required":[2,1]}');
  });

  it('drops undefined object members as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it('keeps a __proto__ key as data', () => {
    expect(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":2}'))).toBe('{"__proto__":{"x":1},"a":2}');
  });

  it.each([
    ['a lone high surrogate in a value', { d: 'a\uD800' }],
    ['a lone low surrogate in a key', { ['\uDC00']: 1 }],
    ['a non-finite number', { n: Number.NaN }],
    ['a function', { f: () => 1 }],
    ['undefined in an array', [undefined]],
    ['a bigint', { n: 1n }],
  ])('rejects %s before hashing', (_what, value) => {
    expect(codeOf(() => canonicalJson(value))).toBe(RiskErrorCode.UNHASHABLE_DEFINITION);
  });

  it('rejects nesting deeper than the bound, and cycles through it, without overflowing the stack', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(codeOf(() => canonicalJson(deep))).toBe(RiskErrorCode.UNHASHABLE_DEFINITION);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(codeOf(() => canonicalJson(cycle))).toBe(RiskErrorCode.UNHASHABLE_DEFINITION);
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_CANONICAL_DEPTH; i++) ok = [ok];
    expect(codeOf(() => canonicalJson(ok))).toBeUndefined();
  });

  it('tells well-formed UTF-16 from text with lone surrogates', () => {
    expect(isWellFormed('a\u{1F600}b')).toBe(true);
    expect(isWellFormed('a\uD83D')).toBe(false);
    expect(isWellFormed('\uDE00a')).toBe(false);
  });
});
