/**
 * Words for the index and for queries: split on anything that is not a letter
 * or digit and at camelCase humps, lower-cased, common words dropped, plural
 * and verb endings folded so that "issues" finds "issue" and "listing" finds
 * "list". The same function serves both sides, so they always agree.
 */

const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could do does for from get give has have how i if in into is it its ' +
    'me my of on or our please show so some than that the their them then there these this those to tool tools ' +
    'use using via want was we were what when where which who will with would you your'
  ).split(' '),
);

const HUMP = /([a-z0-9])([A-Z])/g;
const SEPARATOR = /[^\p{L}\p{N}]+/u;

/** Folded forms of words seen lately: tool text repeats a small vocabulary, so most words are folded once. */
const folded = new Map<string, string>();
const MAX_FOLDED = 50_000;

/** Any character outside ASCII: such text takes the Unicode path. */
const NON_ASCII = /[^\p{ASCII}]/u;

/** The words of `text`, in order, repeats kept. */
export function wordsOf(text: string): string[] {
  const words: string[] = [];
  if (NON_ASCII.test(text)) {
    for (const raw of text.replace(HUMP, '$1 $2').toLowerCase().split(SEPARATOR)) keep(raw, words);
    return words;
  }
  // ASCII, most tool text: one pass, the same words as the Unicode path (test/terms.test.ts compares them).
  let start = -1;
  let upper = false;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    const isUpper = c >= 65 && c <= 90;
    const isLowerOrDigit = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
    if (isUpper || isLowerOrDigit) {
      if (start < 0) {
        start = i;
        upper = isUpper;
        continue;
      }
      // A hump: a lower-case letter or digit, then a capital, starts a new word ("listIssues").
      if (isUpper) {
        const previous = text.charCodeAt(i - 1);
        if ((previous >= 97 && previous <= 122) || (previous >= 48 && previous <= 57)) {
          keep(upper ? text.slice(start, i).toLowerCase() : text.slice(start, i), words);
          start = i;
        }
        upper = true;
      }
      continue;
    }
    if (start >= 0) keep(upper ? text.slice(start, i).toLowerCase() : text.slice(start, i), words);
    start = -1;
    upper = false;
  }
  return words;
}

/** Adds `raw`'s folded form to `words`, unless it is empty, too long or a common word. */
function keep(raw: string, words: string[]): void {
  if (raw.length === 0 || raw.length > 64) return;
  // One look-up for most words: a common word is remembered as folding to nothing.
  let word = folded.get(raw);
  if (word === undefined) {
    word = STOP_WORDS.has(raw) ? '' : stem(raw);
    if (folded.size >= MAX_FOLDED) folded.clear();
    folded.set(raw, word);
  }
  if (word !== '') words.push(word);
}

/** `words` with each one kept at most `maxRepeats` times, and how many distinct words there are. */
export function cappedWordsOf(words: readonly string[], maxRepeats: number): { words: string[]; distinct: number } {
  const seen = new Map<string, number>();
  const kept: string[] = [];
  for (const word of words) {
    const count = (seen.get(word) ?? 0) + 1;
    seen.set(word, count);
    if (count <= maxRepeats) kept.push(word);
  }
  return { words: kept, distinct: seen.size };
}

/** A light suffix fold; not a full stemmer, but the same on both sides of a match. */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  const base = stripSuffix(word);
  // "create", "created" and "creating" all become "creat".
  return base.length > 4 && base.endsWith('e') ? base.slice(0, -1) : base;
}

function stripSuffix(word: string): string {
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith('ed') && word.length > 4) return undouble(word.slice(0, -2));
  if (word.endsWith('es') && /(?:ch|sh|x|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is'))
    return word.slice(0, -1);
  return word;
}

/** "stopp" -> "stop", "mapp" -> "map": the doubled consonant an -ing or -ed ending leaves. */
function undouble(word: string): string {
  const last = word.at(-1);
  return word.length > 3 && last === word.at(-2) && last !== 'l' && last !== 's' ? word.slice(0, -1) : word;
}
