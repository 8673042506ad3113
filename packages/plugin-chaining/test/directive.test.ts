import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MetaKey } from '@sluice/core';
import { NEXT_TOOL_KEYS, readDirective } from '@sluice/plugin-chaining';
import { hasDirective } from '../src/directive.js';

const withMeta = (meta: unknown) => ({ content: [], _meta: meta }) as never;

describe('reading a next-tool directive', () => {
  it('reads our key first, then the plain key, then the openai key', () => {
    expect(NEXT_TOOL_KEYS).toEqual([MetaKey.NEXT_TOOL, 'nextTool', 'openai/nextTool']);
    const read = readDirective(
      withMeta({ 'openai/nextTool': { tool: 'c' }, nextTool: { tool: 'b' }, [MetaKey.NEXT_TOOL]: { tool: 'a' } }),
    );
    expect(read).toEqual({ kind: 'valid', key: MetaKey.NEXT_TOOL, next: { tool: 'a', arguments: {} } });
    expect(readDirective(withMeta({ 'openai/nextTool': { tool: 'c', arguments: { x: 1 } } }))).toMatchObject({
      key: 'openai/nextTool',
      next: { tool: 'c', arguments: { x: 1 } },
    });
  });

  it('treats a missing, undefined or null directive as none', () => {
    for (const meta of [undefined, null, {}, { nextTool: null }, { nextTool: undefined }, 'text', [1]]) {
      expect(readDirective(withMeta(meta))).toEqual({ kind: 'none' });
      expect(hasDirective(withMeta(meta))).toBe(false);
    }
  });

  it('reports each malformed shape with the offending field', () => {
    expect(readDirective(withMeta({ nextTool: 'step1' }))).toMatchObject({ kind: 'invalid', key: 'nextTool' });
    expect(readDirective(withMeta({ nextTool: { tool: 42 } }))).toMatchObject({
      kind: 'invalid',
      message: expect.stringContaining('tool:') as unknown,
    });
    expect(readDirective(withMeta({ nextTool: { tool: 'a b' } }))).toMatchObject({
      message: expect.stringContaining('must be a tool name') as unknown,
    });
    expect(readDirective(withMeta({ nextTool: { tool: 'x'.repeat(129) } }))).toMatchObject({ kind: 'invalid' });
    expect(readDirective(withMeta({ nextTool: { tool: 'a', arguments: [1, 2] } }))).toMatchObject({
      message: expect.stringContaining('arguments:') as unknown,
    });
  });

  it('refuses arguments that carry an own __proto__ key, or are not a plain object', () => {
    const raw = JSON.parse('{"nextTool":{"tool":"a","arguments":{"__proto__":{"polluted":true},"ok":1}}}') as unknown;
    expect(readDirective(withMeta(raw))).toMatchObject({
      kind: 'invalid',
      message: 'arguments: must be an object of named arguments',
    });
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    for (const args of [new Date(0), new Map(), 'x', 3]) {
      expect(readDirective(withMeta({ nextTool: { tool: 'a', arguments: args } }))).toMatchObject({ kind: 'invalid' });
    }
    expect(
      readDirective(withMeta({ nextTool: { tool: 'a', arguments: Object.create(null) as object } })),
    ).toMatchObject({
      kind: 'valid',
    });
  });

  it('never throws, whatever the directive holds', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NEXT_TOOL_KEYS),
        fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true }),
        (key, value) => {
          const read = readDirective(withMeta({ [key]: value }));
          expect(['none', 'valid', 'invalid']).toContain(read.kind);
          expect(hasDirective(withMeta({ [key]: value }))).toBe(value !== undefined && value !== null);
        },
      ),
      { numRuns: 500 },
    );
  });
});
