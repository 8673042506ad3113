// The one-pass ASCII tokenizer against the Unicode path it stands in for.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stem, wordsOf } from '@sluice/plugin-tool-search';

const STOP = new Set(
  (
    'a an and are as at be been but by can could do does for from get give has have how i if in into is it its ' +
    'me my of on or our please show so some than that the their them then there these this those to tool tools ' +
    'use using via want was we were what when where which who will with would you your'
  ).split(' '),
);

/** The definition: humps split, lower-cased, split on anything not a letter or digit, common words dropped, folded. */
function reference(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((raw) => raw.length > 0 && raw.length <= 64 && !STOP.has(raw))
    .map(stem);
}

const asciiText = fc
  .array(
    fc.oneof(
      fc.constantFrom(...'aAbBzZ09xX_- ./:\tIssuesListHTTPServerGetThe'.split('')),
      fc.constantFrom('listIssues', 'getHTTPResponse', 'v2Api', 'the', 'Files', 'ID', 'a'.repeat(70), 'snake_case'),
      fc.string({ maxLength: 3 }),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

describe('wordsOf', () => {
  it('reads ASCII text in one pass exactly as the Unicode path does', () => {
    fc.assert(
      fc.property(asciiText, (text) => {
        expect(wordsOf(text)).toEqual(reference(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('reads any text as the definition says', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: 'binary' }), (text) => {
        expect(wordsOf(text)).toEqual(reference(text));
      }),
      { numRuns: 300 },
    );
    expect(wordsOf('listPullRequests on GitHub')).toEqual(['list', 'pull', 'request', 'git', 'hub']);
    expect(wordsOf('Créer un problème')).toEqual(['créer', 'un', 'problèm']);
  });
});
