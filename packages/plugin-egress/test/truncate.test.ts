import { describe, expect, it } from 'vitest';
import type { CallToolResult, ContentBlock } from '@sluice/core';
import { MetaKey } from '@sluice/core';
import { interventionText } from '../src/intervention.js';
import { resultSize } from '../src/measure.js';
import { truncateResult } from '../src/truncate.js';
import { isValidUtf8Text, oracleSize } from './oracle.js';

const LIMIT = 1_024;

function cut(result: CallToolResult, limit = LIMIT, keepStructured = false) {
  const truncation = truncateResult(result, limit, resultSize(result), keepStructured);
  if (truncation === undefined) throw new Error('expected a truncation');
  return truncation;
}

const text = (t: string): ContentBlock => ({ type: 'text', text: t });
const textOfBlock = (block: ContentBlock | undefined): string => (block as { text: string }).text;

describe('truncating a result', () => {
  const ALPHABETS = { ASCII: 'abcd', '2-byte': 'éß', '3-byte': '日€', '4-byte': '😀𝄞', 'emoji sequences': '👨‍👩‍👧🇫🇷👍🏽' };
  for (const [name, alphabet] of Object.entries(ALPHABETS)) {
    it(`cuts ${name} text at every position near the limit into valid UTF-8 within the limit`, () => {
      // Shifting the text one byte at a time puts the limit at every offset inside every character and sequence.
      for (let lead = 0; lead < 40; lead++) {
        const input: CallToolResult = { content: [text('x'.repeat(lead) + alphabet.repeat(400))] };
        const { result, keptBytes } = cut(input);
        const kept = textOfBlock(result.content[0]);
        expect(isValidUtf8Text(kept)).toBe(true);
        expect(textOfBlock(input.content[0]).startsWith(kept)).toBe(true);
        expect(oracleSize(result)).toBeLessThanOrEqual(LIMIT);
        expect(keptBytes).toBe(oracleSize({ content: [result.content[0]!] }));
      }
    });
  }

  it('keeps whole emoji sequences: a ZWJ family is kept or dropped, never split', () => {
    const family = '👨‍👩‍👧';
    for (let lead = 0; lead < family.length * 2; lead++) {
      const { result } = cut({ content: [text('x'.repeat(lead) + family.repeat(200))] });
      const kept = textOfBlock(result.content[0]).slice(lead);
      expect(kept.length % family.length).toBe(0);
    }
  });

  it('turns lone surrogates into U+FFFD in what it keeps, and never leaves one at the cut', () => {
    const input: CallToolResult = { content: [text(`a\ud800b${'\udc00x'.repeat(300)}😀`.repeat(3))] };
    const kept = textOfBlock(cut(input).result.content[0]);
    expect(isValidUtf8Text(kept)).toBe(true);
    expect(kept.startsWith('a\ufffdb\ufffdx')).toBe(true);
  });

  it('keeps blocks in order, cuts the first text that does not fit, drops the rest, appends the intervention', () => {
    const input: CallToolResult = {
      content: [
        text('first'),
        { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' },
        text('y'.repeat(5_000)),
        text('later'),
        { type: 'image', data: 'AA==', mimeType: 'image/png' },
      ],
      structuredContent: { rows: ['r'.repeat(3_000)] },
    };
    const { result } = cut(input);
    expect(result.content).toHaveLength(4);
    expect(result.content[0]).toBe(input.content[0]);
    expect(result.content[1]).toBe(input.content[1]);
    expect(textOfBlock(result.content[2]).length).toBeGreaterThan(200);
    expect(textOfBlock(result.content[2])).toMatch(/^y+$/);
    expect(result.content[3]).toEqual({ type: 'text', text: interventionText(LIMIT) });
    expect(result.structuredContent).toBeUndefined();
    expect(oracleSize(result)).toBeLessThanOrEqual(LIMIT);
  });

  it('keeps structuredContent whole when it fits after the content, and drops it when it does not', () => {
    const small = cut({ content: [text('a'.repeat(5_000))], structuredContent: { rows: [1, 2, 3] } }, 3_000);
    expect(small.result.structuredContent).toBeUndefined(); // the text took the room first
    const fits = cut({
      content: [text('short')],
      structuredContent: { rows: [1, 2, 3] },
      extra: 'z'.repeat(3_000),
    });
    expect(fits.result.structuredContent).toEqual({ rows: [1, 2, 3] });
    expect((fits.result as Record<string, unknown>).extra).toBeUndefined();
  });

  it('keeps structuredContent first, or gives up, when the output schema needs it whole', () => {
    const input: CallToolResult = { content: [text('t'.repeat(4_000))], structuredContent: { rows: [1, 2, 3] } };
    const kept = truncateResult(input, LIMIT, resultSize(input), true);
    expect(kept?.result.structuredContent).toBe(input.structuredContent);
    expect(textOfBlock(kept?.result.content[0]).length).toBeGreaterThan(100);
    const huge: CallToolResult = { content: [text('t')], structuredContent: { rows: ['r'.repeat(4_000)] } };
    expect(truncateResult(huge, LIMIT, resultSize(huge), true)).toBeUndefined();
  });

  it('cuts the text of an embedded resource, and drops blobs and images whole', () => {
    const resource: CallToolResult = {
      content: [{ type: 'resource', resource: { uri: 'file:///log', text: 'ł'.repeat(3_000) } }],
    };
    const kept = cut(resource).result.content[0] as { resource: { text: string; uri: string } };
    expect(kept.resource.uri).toBe('file:///log');
    expect(kept.resource.text).toMatch(/^ł+$/);
    const blob: CallToolResult = {
      content: [{ type: 'resource', resource: { uri: 'file:///bin', blob: 'A'.repeat(3_000) } }],
    };
    expect(cut(blob).result.content).toHaveLength(1); // only the intervention
  });

  it('keeps the _meta keys that steer the next step, and others while they fit', () => {
    const input: CallToolResult = {
      content: [text('x'.repeat(5_000))],
      _meta: {
        bulky: 'b'.repeat(2_000),
        [MetaKey.NEXT_TOOL]: { name: 'page', arguments: { offset: 50 } },
        nextTool: 'page',
        'openai/nextTool': 'page',
        [MetaKey.EGRESS]: { stale: true },
      },
    };
    const meta = cut(input).result._meta!;
    expect(meta[MetaKey.NEXT_TOOL]).toEqual({ name: 'page', arguments: { offset: 50 } });
    expect(meta.nextTool).toBe('page');
    expect(meta['openai/nextTool']).toBe('page');
    expect(meta.bulky).toBeUndefined();
    expect(meta[MetaKey.EGRESS]).toEqual({
      originalBytes: resultSize(input),
      keptBytes: expect.any(Number) as unknown,
      limitBytes: LIMIT,
    });
  });

  it('keeps isError, and never copies a __proto__ key', () => {
    const input = JSON.parse(
      `{"content":[{"type":"text","text":"${'e'.repeat(3_000)}"}],"isError":true,` +
        '"_meta":{"__proto__":{"polluted":true}}}',
    ) as CallToolResult;
    const { result } = cut(input);
    expect(result.isError).toBe(true);
    expect(Object.prototype.hasOwnProperty.call(result._meta, '__proto__')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reports what it kept: the output minus the intervention message and its record', () => {
    const input: CallToolResult = { content: [text('k'.repeat(10_000))], _meta: { nextTool: 'n' } };
    const { result, keptBytes } = cut(input, 4_096);
    const withoutNotice = { content: result.content.slice(0, -1), _meta: { nextTool: 'n' } };
    expect(keptBytes).toBe(oracleSize(withoutNotice));
    expect(oracleSize(result)).toBeLessThanOrEqual(4_096);
  });
});
