// fast-check arbitraries for tool results: every kind of block, unicode of
// every width (lone surrogates included), structuredContent and _meta.
import fc from 'fast-check';
import type { CallToolResult } from '@sluice/core';

// Lone surrogates too: '\ud83d' and '\ude00' stand alone unless they happen to meet in that order.
const PIECES = ['👨‍👩‍👧', '🇫🇷', '👍🏽', '❤️', '😀', 'é', '日本', 'ñ̃', '\ud83d', '\ude00'];

/** Strings of every UTF-8 width, emoji sequences, and lone surrogates. */
export const unicodeText = (maxLength: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ unit: 'binary', maxLength }),
    // 'max': lengths spread up to the maximum, so that many results cross the limits under test.
    fc.string({ unit: 'binary', maxLength, size: 'max' }),
    fc.string({ unit: 'grapheme', maxLength: Math.ceil(maxLength / 4), size: 'max' }),
    fc
      .array(fc.constantFrom(...PIECES, 'a', ' ', '\n'), { maxLength: Math.ceil(maxLength / 3), size: 'max' })
      .map((parts) => parts.join('')),
  );

const base64 = fc.base64String({ maxLength: 600 });
const meta = fc.option(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), {
  nil: undefined,
});

const textBlock = fc.record(
  { type: fc.constant('text' as const), text: unicodeText(1_500), _meta: meta },
  { requiredKeys: ['type', 'text'] },
);
const mediaBlock = fc.record({
  type: fc.constantFrom('image' as const, 'audio' as const),
  data: base64,
  mimeType: fc.constantFrom('image/png', 'audio/wav'),
});
const textResource = fc.record({
  type: fc.constant('resource' as const),
  resource: fc.record({
    uri: fc.constant('file:///doc.txt'),
    text: unicodeText(800),
    mimeType: fc.constant('text/plain'),
  }),
});
const blobResource = fc.record({
  type: fc.constant('resource' as const),
  resource: fc.record({ uri: fc.constant('file:///doc.bin'), blob: base64 }),
});
const link = fc.record(
  {
    type: fc.constant('resource_link' as const),
    uri: fc.constant('file:///linked'),
    name: unicodeText(40),
    description: unicodeText(200),
  },
  { requiredKeys: ['type', 'uri', 'name'] },
);

export const arbitraryBlock = fc.oneof(
  { arbitrary: textBlock, weight: 4 },
  { arbitrary: mediaBlock, weight: 1 },
  { arbitrary: textResource, weight: 1 },
  { arbitrary: blobResource, weight: 1 },
  { arbitrary: link, weight: 1 },
);

const resultMeta = fc.option(
  fc.record(
    {
      'dev.sluice/nextTool': fc.record({ name: fc.constant('next_page'), arguments: fc.record({ offset: fc.nat() }) }),
      nextTool: fc.constant('next_page'),
      'openai/nextTool': fc.constant('next_page'),
      trace: unicodeText(300),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

/** Any tool result, from tiny to a few kilobytes. */
export function arbitraryResult(): fc.Arbitrary<CallToolResult> {
  return fc
    .record(
      {
        content: fc.array(arbitraryBlock, { maxLength: 6 }),
        structuredContent: fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
        isError: fc.boolean(),
        _meta: resultMeta,
      },
      { requiredKeys: ['content'] },
    )
    .map((r) => r as CallToolResult);
}
