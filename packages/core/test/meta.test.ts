import { describe, expect, it } from 'vitest';
import { emptyMeta, toPlainMeta } from '../src/meta.js';

describe('toPlainMeta', () => {
  it('answers undefined for an empty _meta and for an empty one on an empty base', () => {
    expect(toPlainMeta(emptyMeta())).toBeUndefined();
    expect(toPlainMeta(emptyMeta(), {})).toBeUndefined();
  });

  it('copies every key into a plain object the SDK can serialize', () => {
    const meta = emptyMeta();
    meta.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    meta['dev.sluice/callStack'] = ['a', 'b'];
    const plain = toPlainMeta(meta)!;
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect(plain).toEqual({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'dev.sluice/callStack': ['a', 'b'],
    });
    expect(JSON.parse(JSON.stringify(plain))).toEqual(plain);
  });

  it('keeps a __proto__ key a key: the copy never gets a new prototype', () => {
    const meta = emptyMeta();
    meta.__proto__ = { polluted: true };
    meta.ok = 1;
    const plain = toPlainMeta(meta)!;
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect((plain as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(plain)).toEqual(['__proto__', 'ok']);
    expect(JSON.stringify(plain)).toBe('{"__proto__":{"polluted":true},"ok":1}');
  });

  it('puts the base first and lets the call _meta override its keys', () => {
    const meta = emptyMeta();
    meta.shared = 'from meta';
    meta.own = 1;
    const plain = toPlainMeta(meta, { shared: 'from base', base: true })!;
    expect(plain).toEqual({ shared: 'from meta', base: true, own: 1 });
    expect(Object.keys(plain)).toEqual(['shared', 'base', 'own']);
  });

  it('leaves the _meta it copies unchanged', () => {
    const meta = emptyMeta();
    meta.a = 1;
    const plain = toPlainMeta(meta)!;
    plain.b = 2;
    expect(Object.keys(meta)).toEqual(['a']);
  });
});
