import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PoisonPattern, scanText } from '@sluice/plugin-risk';

/** Cyrillic letters that look like Latin ones. */
const LOOKALIKES = ['\u0430', '\u0435', '\u043e', '\u0440', '\u0441', '\u0445', '\u0443', '\u0456', '\u0410', '\u0415'];

const latinWord = fc.stringMatching(/^[a-zA-Z]{2,12}$/);
/** Plain ASCII around the word, starting or ending with a separator so the word stays a word. */
const before = fc.oneof(
  fc.constant(''),
  fc.stringMatching(/^[ -~]{0,30}$/).map((s) => `${s} `),
);
const after = fc.oneof(
  fc.constant(''),
  fc.stringMatching(/^[ -~]{0,30}$/).map((s) => ` ${s}`),
);

const homoglyphs = (text: string) =>
  scanText(text).hits.filter((hit) => hit.pattern === PoisonPattern.UNICODE_HOMOGLYPH_RISK);

describe('mixed-script words', () => {
  it('flags a word whose first letter is a Cyrillic look-alike, whatever follows it', () => {
    expect(homoglyphs('\u0430dmin')).toHaveLength(1);
    expect(homoglyphs('\u0430dmin tools')).toHaveLength(1);
    expect(homoglyphs('Log in as \u0430dmin, then continue.')).toHaveLength(1);
    expect(homoglyphs('\u0430dmin\u00e9 tools')).toHaveLength(1);
  });

  it('flags a look-alike at every position of a Latin word, with any plain text around it', () => {
    fc.assert(
      fc.property(latinWord, fc.nat(), fc.constantFrom(...LOOKALIKES), before, after, (word, at, glyph, head, tail) => {
        const position = at % word.length;
        const disguised = `${word.slice(0, position)}${glyph}${word.slice(position + 1)}`;
        const hits = homoglyphs(`${head}${disguised}${tail}`);
        expect(hits.length).toBeGreaterThanOrEqual(1);
        expect(hits[0]?.excerpt).toContain(disguised);
      }),
      { numRuns: 500 },
    );
  });

  it('leaves whole Cyrillic words beside Latin ones alone', () => {
    fc.assert(
      fc.property(before, after, (head, tail) => {
        expect(homoglyphs(`${head}\u0430\u0434\u043c\u0438\u043d${tail}`)).toHaveLength(0);
      }),
    );
  });
});
