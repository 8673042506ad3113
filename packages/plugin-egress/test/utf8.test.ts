import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { byteLength, utf8Cut, utf8Length, wellFormed } from '../src/utf8.js';
import { isValidUtf8Text } from './oracle.js';

const encoded = (text: string): number => new TextEncoder().encode(text).length;

/** The longest prefix that fits, found the slow way: code point by code point. */
function referenceCut(text: string, maxBytes: number): number {
  let bytes = 0;
  let at = 0;
  for (const char of text) {
    // for...of walks code points: a pair is one, a lone surrogate one (written as U+FFFD).
    const cp = char.codePointAt(0) ?? 0;
    const size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes) break;
    bytes += size;
    at += char.length;
  }
  return at;
}

const ALPHABETS: Record<string, string> = {
  ASCII: 'abcdefgh',
  '2-byte': 'éßяα',
  '3-byte': '日本語€',
  '4-byte': '😀𝄞𠜎🚀',
  'emoji sequences': '👨‍👩‍👧🇫🇷👍🏽❤️',
  mixed: 'a é 日 😀 👨‍👩‍👧 z',
};

describe('counting UTF-8 bytes', () => {
  it('counts what an encoder writes, a lone surrogate as the 3 bytes of U+FFFD', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(utf8Length(text)).toBe(encoded(text));
        expect(byteLength(text)).toBe(encoded(text));
        const long = text.repeat(8); // past the short-string loop, into the native counter
        expect(byteLength(long)).toBe(encoded(long));
      }),
    );
    expect(utf8Length('\ud800')).toBe(3);
    expect(utf8Length('a\udc00\ud83d')).toBe(7);
    expect(utf8Length('\ud83d\ude00')).toBe(4);
  });

  it('stops counting once past the limit', () => {
    // 10 code units of 2 bytes each: it stops at 12 bytes, never reaching 20.
    expect(utf8Length('é'.repeat(10), 10)).toBe(12);
    // Longer in code units than the limit in bytes: over without a scan.
    expect(utf8Length('a'.repeat(100), 10)).toBe(100);
    expect(byteLength('a'.repeat(100), 10)).toBe(100);
  });
});

describe('cutting at a byte budget', () => {
  for (const [name, alphabet] of Object.entries(ALPHABETS)) {
    it(`cuts ${name} text at every position near the limit into the longest valid prefix`, () => {
      for (let lead = 0; lead < 4; lead++) {
        const text = 'x'.repeat(lead) + alphabet.repeat(6);
        const total = encoded(text);
        for (let maxBytes = 0; maxBytes <= total + 2; maxBytes++) {
          const { end, bytes } = utf8Cut(text, maxBytes);
          const kept = text.slice(0, end);
          expect(bytes).toBe(encoded(kept));
          expect(bytes).toBeLessThanOrEqual(maxBytes);
          expect(isValidUtf8Text(kept)).toBe(true);
          expect(end).toBe(referenceCut(text, maxBytes));
        }
      }
    });
  }

  it('never splits a surrogate pair that straddles its 64 KiB chunks', () => {
    for (let shift = 0; shift < 4; shift++) {
      const text = 'a'.repeat(65_535 - shift) + '😀'.repeat(8) + 'b'.repeat(10);
      for (const maxBytes of [65_535, 65_536, 65_537, 65_538, 65_539, 65_540, 65_560, 200_000]) {
        const { end, bytes } = utf8Cut(text, maxBytes);
        expect(end).toBe(referenceCut(text, maxBytes));
        expect(bytes).toBe(encoded(text.slice(0, end)));
        expect(isValidUtf8Text(text.slice(0, end))).toBe(true);
      }
    }
  });

  it('finds the same cut as a code point walk for any string and budget', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.nat(900), (text, maxBytes) => {
        const { end, bytes } = utf8Cut(text, maxBytes);
        expect(end).toBe(referenceCut(text, maxBytes));
        expect(bytes).toBe(encoded(text.slice(0, end)));
      }),
    );
  });
});

describe('well-formed text', () => {
  it('replaces lone surrogates with U+FFFD and leaves well-formed text as the same string', () => {
    expect(wellFormed('a\ud800b\udc00')).toBe('a\ufffdb\ufffd');
    const text = 'fine 😀';
    expect(wellFormed(text)).toBe(text);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (text) => {
        const clean = wellFormed(text);
        expect(isValidUtf8Text(clean)).toBe(true);
        expect(encoded(clean)).toBe(encoded(text));
      }),
    );
  });
});
