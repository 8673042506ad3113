import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { constsOfBundle as consts } from '../scripts/bundle-consts.mjs';

describe("a bundle's top-level constants", () => {
  it('declares a top-level var never written again const, its value where it stood', () => {
    const input =
      'var WIDTH = 26;\nvar TABLE = new Uint8Array(WIDTH);\nfunction read(i) { return TABLE[i] * WIDTH; }\n';
    const { text, consts: count } = consts(input);
    expect(count).toBe(2);
    expect(text).toBe(
      'const WIDTH=26;\nconst TABLE=new Uint8Array(WIDTH);\nfunction read(i) { return TABLE[i] * WIDTH; }\n',
    );
    // The value starts at the same column: the source map still points at it.
    expect(text.split('\n')[1]?.indexOf('new')).toBe(input.split('\n')[1]?.indexOf('new'));
  });

  it.each([
    ['assigned', 'var a = 1;\nfunction f() { a = 2; }'],
    ['assigned with an operator', 'var a = 1;\nfunction f() { a += 2; }'],
    ['incremented', 'var a = 1;\nfunction f() { a++; }'],
    ['decremented first', 'var a = 1;\nfunction f() { --a; }'],
    ['an array pattern target', 'var a = 1;\nfunction f() { [a] = [2]; }'],
    ['an object pattern target', 'var a = 1;\nfunction f() { ({ a } = { a: 2 }); }'],
    ['a renamed object pattern target', 'var a = 1;\nfunction f() { ({ b: a } = { b: 2 }); }'],
    ['a pattern default', 'var a = 1;\nfunction f() { [a = 3] = []; }'],
    ['a spread target', 'var a = 1;\nfunction f() { [...a] = [2]; }'],
    ['a loop binding', 'var a = 1;\nfunction f() { for (a of [2]) ; }'],
    ['a loop key', 'var a = 1;\nfunction f() { for (a in {}) ; }'],
    ['written in a scope of its own (by name, whatever the scope)', 'var a = 1;\nfunction f(a) { a = 2; }'],
    ['declared without a value', 'var a;\nfunction f() { return a; }'],
    ['declared twice', 'var a = 1;\nvar a = 2;'],
    ['declared as a function too', 'var a = 1;\nfunction a() {}'],
    ['one of two in a declaration', 'var a = 1, b = 2;'],
    ['declared again in a block', 'var a = 1;\n{ var a = 2; }'],
    ['declared again under an if', 'var a = 1;\nif (true) var a = 2;'],
    ['declared again in a loop head', 'var a = 1;\nfor (var a in { b: 1 }) ;'],
    ['declared again in a for-of head', 'var a = 1;\nfor (var a of [2]) ;'],
    [
      'declared again inside a function (another binding, counted all the same)',
      'var a = 1;\nfunction f() { var a = 2; }',
    ],
    ['in a file that calls eval', 'var a = 1;\nfunction f() { eval("a = 2"); }'],
    ['in a file with a with statement', 'var a = 1;\nfunction f(o) { with (o) b = 2; }'],
    ['a pattern', 'var { a } = { a: 1 };'],
  ])('leaves a var %s alone', (_what, input) => {
    expect(consts(input)).toEqual({ text: input, consts: 0 });
  });

  it('leaves declarations inside functions, and let and const, as they are', () => {
    const input = 'function f() { var a = 1; return a; }\nlet b = 2;\nconst c = 3;\n';
    expect(consts(input)).toEqual({ text: input, consts: 0 });
  });

  it('gives the same results when run', () => {
    const input = [
      'var LIMIT = 3;',
      'var seen = 0;',
      'var NAMES = ["a", "b", "c", "d"];',
      'function take() { seen++; return NAMES.slice(0, LIMIT).join(""); }',
      'var FIRST = take();',
      'return [FIRST, take(), seen];',
    ].join('\n');
    const { text, consts: count } = consts(input);
    expect(count).toBe(3);
    expect(text).toContain('var seen = 0;');
    const run = (body: string): unknown =>
      runInNewContext(`(function () {
${body}
})()`);
    expect(run(text)).toEqual(run(input));
  });
});
