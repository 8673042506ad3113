import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { CallToolResult } from '@sluice/core';
import { TWIN_MIN_LENGTH, blockSize, fitsWithin, originalSize, resultSize } from '../src/measure.js';
import { oracleSize } from './oracle.js';
import { arbitraryResult } from './results.js';

describe('the size of a tool result', () => {
  it('is its JSON with payload strings counted as their own UTF-8 bytes, for any result', () => {
    fc.assert(
      fc.property(arbitraryResult(), (result) => {
        expect(resultSize(result)).toBe(oracleSize(result));
      }),
    );
  });

  it('counts text unescaped, a lone surrogate as 3 bytes, and structured parts as JSON', () => {
    const text = 'line\n"quoted"\ud800';
    const result: CallToolResult = { content: [{ type: 'text', text }], structuredContent: { text } };
    const skeleton = Buffer.byteLength(
      JSON.stringify({ content: [{ type: 'text', text: '' }], structuredContent: { text } }),
    );
    // 'line' 4, newline 1, '"quoted"' 8, lone surrogate 3: no escapes in the text's count.
    expect(resultSize(result)).toBe(skeleton + 4 + 1 + 8 + 3);
  });

  it('counts a long text once when a text block and a top-level string of structuredContent both carry it', () => {
    const file = 'é line\n'.repeat(300); // 2,400 characters, 2,700 bytes
    const twice: CallToolResult = { content: [{ type: 'text', text: file }], structuredContent: { content: file } };
    const wire = Buffer.byteLength(JSON.stringify(twice));
    const once = wire - Buffer.byteLength(file) - 300; // the text block's copy, unescaped, no longer counted
    expect(resultSize(twice)).toBe(once);
    expect(resultSize(twice)).toBe(oracleSize(twice));
    expect(originalSize(twice, 4_096)).toBe(once);
    expect(fitsWithin(twice, once)).toBe(true);
    expect(fitsWithin(twice, once - 1)).toBe(false);
    // Another text, a nested copy, or a short one: counted as before.
    const other: CallToolResult = {
      content: [{ type: 'text', text: `${file}.` }],
      structuredContent: { content: file },
    };
    expect(resultSize(other)).toBe(Buffer.byteLength(JSON.stringify(other)) - 300);
    const nested: CallToolResult = { content: [{ type: 'text', text: file }], structuredContent: { file: { file } } };
    expect(resultSize(nested)).toBe(Buffer.byteLength(JSON.stringify(nested)) - 300);
    const short = 'x'.repeat(TWIN_MIN_LENGTH - 1);
    const small: CallToolResult = { content: [{ type: 'text', text: short }], structuredContent: { short } };
    expect(resultSize(small)).toBe(Buffer.byteLength(JSON.stringify(small)));
  });

  it('counts every kind of block: base64 data, embedded text and blobs, resource links, block _meta', () => {
    const result: CallToolResult = {
      content: [
        { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav', _meta: { note: 'é' } },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'ünï' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAEC' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c', description: 'a link' },
      ],
      _meta: { 'dev.sluice/nextTool': { name: 'next' } },
    };
    expect(resultSize(result)).toBe(oracleSize(result));
    expect(blockSize(result.content[0])).toBe(Buffer.byteLength(JSON.stringify(result.content[0])));
  });

  it('stops counting a large result soon after the room it is given', () => {
    const result: CallToolResult = {
      content: Array.from({ length: 1_000 }, () => ({ type: 'text' as const, text: 'x'.repeat(100) })),
    };
    const counted = resultSize(result, 2_000);
    expect(counted).toBeGreaterThan(2_000);
    expect(counted).toBeLessThan(2_200);
  });

  it('tells whether a result fits, by a bound when far under the limit and by counting near it', () => {
    fc.assert(
      fc.property(arbitraryResult(), fc.integer({ min: 1_024, max: 6_000 }), (result, limit) => {
        expect(fitsWithin(result, limit)).toBe(oracleSize(result) <= limit);
      }),
    );
    // Not plain data (a Date's toJSON): never trusted to the bound, always counted.
    const dated: CallToolResult = { content: [], structuredContent: { at: new Date(0) } };
    expect(fitsWithin(dated, oracleSize(dated))).toBe(true);
    expect(fitsWithin(dated, oracleSize(dated) - 1)).toBe(false);
  });

  it('reports the original size exactly when no part is over the limit, and a lower bound otherwise', () => {
    const parts: CallToolResult = {
      content: [
        { type: 'text', text: 'é'.repeat(500) },
        { type: 'text', text: 'é'.repeat(500) },
      ],
      structuredContent: { n: 1 },
    };
    expect(originalSize(parts, 1_024)).toBe(oracleSize(parts));
    const rows = Array.from({ length: 2_000 }, (_, i) => ({ i, text: 'row' }));
    const huge: CallToolResult = { content: [{ type: 'text', text: 'é'.repeat(5_000) }], structuredContent: { rows } };
    const counted = originalSize(huge, 1_024);
    expect(counted).toBeGreaterThanOrEqual(5_000 + 1_024);
    expect(counted).toBeLessThan(oracleSize(huge));
  });
});
