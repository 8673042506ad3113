import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SluiceError } from '@sluice/core';
import { RiskErrorCode, fingerprint, scanText, scanTool } from '@sluice/plugin-risk';
import { canonicalJson, isWellFormed } from '../src/ledger/canonical.js';
import type { ToolShape } from '@sluice/plugin-risk';

/** Any UTF-16 text, lone surrogates included, with the characters the scanner cares about over-represented. */
const specials = [
  '\u200B',
  '\u200C',
  '\u200D',
  '\u202E',
  '\u2066',
  '\uFE0F',
  '\u{E0041}',
  '\u{E007F}',
  '\u{1F3F4}',
  '\u{E0100}',
  '\u001b[',
  '\u009b',
  '\uD800',
  '\uDC00',
  '\u0430',
  '@',
  'http://',
  '<|im_start|>',
  'ignore previous instructions',
  'you are now a',
  'do not tell the user',
  'send all to x@y.co',
  'call send_email',
];
const anyText = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
      fc.constantFrom(...specials),
      fc.string(),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));

const shuffledKeys = (value: unknown, order: number[]): unknown => {
  if (Array.isArray(value)) return value.map((v) => shuffledKeys(v, order));
  if (typeof value !== 'object' || value === null) return value;
  const keys = Object.keys(value);
  const rotated = keys.map((_, i) => keys[(i + (order[i % order.length] ?? 0)) % keys.length] as string);
  const out: Record<string, unknown> = {};
  for (const key of [...new Set([...rotated, ...keys])])
    Object.defineProperty(out, key, {
      value: shuffledKeys((value as Record<string, unknown>)[key], order),
      enumerable: true,
    });
  return out;
};

describe('the scanner under arbitrary input', () => {
  it('never throws on arbitrary JSON, and its excerpts are well-formed', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.string(), { maxLength: 5 }), (value, names) => {
        const result = scanTool(value, { otherTools: names });
        expect(result.clean).toBe(result.hits.length === 0);
        for (const hit of result.hits) expect(isWellFormed(hit.excerpt)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary values, however nested', () => {
    fc.assert(
      fc.property(fc.anything({ maxDepth: 6 }), (value) => {
        scanTool({ name: 'x', description: 'd', inputSchema: value, outputSchema: value });
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary UTF-16 text, lone surrogates included, in any surface', () => {
    fc.assert(
      fc.property(anyText, anyText, fc.array(anyText, { maxLength: 4 }), (description, key, names) => {
        const result = scanTool(
          { name: key, title: description, description, inputSchema: { properties: { [key]: { description } } } },
          { otherTools: names },
        );
        for (const hit of result.hits) expect(isWellFormed(hit.excerpt)).toBe(true);
        scanText(description, '/', { otherTools: names });
      }),
      { numRuns: 500 },
    );
  });
});

describe('the canonicalizer under arbitrary input', () => {
  it('writes JSON that parses back to the value, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('ignores key order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat(7), { minLength: 1, maxLength: 8 }), (value, order) => {
        expect(canonicalJson(shuffledKeys(value, order))).toBe(canonicalJson(value));
      }),
      { numRuns: 300 },
    );
  });

  it('either writes text or refuses with UNHASHABLE_DEFINITION, for anything', () => {
    fc.assert(
      fc.property(
        fc.anything({
          maxDepth: 6,
          withBigInt: true,
          withMap: true,
          withSet: true,
          withTypedArray: true,
          withSparseArray: true,
        }),
        anyText,
        (value, text) => {
          for (const input of [value, { text }, [text, value]]) {
            try {
              expect(typeof canonicalJson(input)).toBe('string');
            } catch (error) {
              expect(SluiceError.is(error) && error.code).toBe(RiskErrorCode.UNHASHABLE_DEFINITION);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses exactly the texts that are not well-formed', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        let refused = false;
        try {
          canonicalJson({ text });
        } catch {
          refused = true;
        }
        expect(refused).toBe(!isWellFormed(text));
      }),
      { numRuns: 500 },
    );
  });

  it('fingerprints any well-formed definition, and refuses the rest with UNHASHABLE_DEFINITION', () => {
    fc.assert(
      fc.property(anyText, fc.jsonValue(), (description, schema) => {
        const definition: ToolShape = { name: 'tool', description, inputSchema: schema };
        try {
          expect(fingerprint(definition)).toMatch(/^[0-9a-f]{64}$/);
        } catch (error) {
          expect(SluiceError.is(error) && error.code).toBe(RiskErrorCode.UNHASHABLE_DEFINITION);
        }
      }),
      { numRuns: 300 },
    );
  });
});
