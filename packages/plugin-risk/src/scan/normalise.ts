import { Buffer } from 'node:buffer';
import type { Disguises, Lookalikes } from './unicode-scan.js';
import { append, isGreekOrCyrillic } from './unicode-scan.js';
import { LITTLE_ENDIAN } from './phrase-automaton.js';

/**
 * What the scan reads besides the text as written: its skeleton (the text a
 * model reads through disguises) and the spans it can decode. Every step is
 * one native pass or a hand-written loop over the text; nothing is built
 * from the input, and decoding is bounded per text.
 */

/**
 * The characters that can make the skeleton differ from the text: the
 * invisible ones, Greek and Cyrillic letters, and the compatibility forms NFKC
 * folds to plain letters (superscripts, letterlike and enclosed forms,
 * ligatures, full-width forms, and the surrogates of mathematical and
 * enclosed alphanumerics). One native search tells whether to build it.
 */
const DISGUISE =
  /\u034f|[\u00aa\u00ad\u00b2\u00b3\u00b9\u00ba\u017f\u02b0-\u02b8\u0370-\u052f\u180e\u1d2c-\u1d6a\u200b-\u200f\u2060-\u2064\u2070-\u209f\u2100-\u214f\u2460-\u24ff\ufb00-\ufb06\ufeff\uff01-\uff5e\ud835\ud83c]/;
/**
 * In one native pass: runs of the compatibility forms NFKC folds to plain
 * letters (only these are normalised), and the soft hyphens, zero-width
 * characters, joiners and combining grapheme joiner the skeleton drops. No
 * compatibility form folds to one of the dropped characters, so one pass
 * gives what normalising and then dropping would. Matched by code point
 * (`u`): one class for the mathematical and enclosed alphanumerics, which a
 * pattern over surrogate pairs would read more slowly.
 */
export const UNDISGUISE =
  /[\u00aa\u00b2\u00b3\u00b9\u00ba\u017f\u02b0-\u02b8\u1d2c-\u1d6a\u2070-\u209f\u2100-\u214f\u2460-\u24ff\ufb00-\ufb06\uff01-\uff5e\u{1d400}-\u{1d7ff}\u{1f100}-\u{1f1ff}]+|[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]|\u034f/gu;

/**
 * The high half of a mathematical or enclosed alphanumeric, dropped
 * characters, a low half: found from each high half (a native search), the
 * dropped run after it read once per kind of high half.
 */
function splitsPair(text: string): boolean {
  for (const high of ['\ud835', '\ud83c'])
    for (let at = text.indexOf(high); at !== -1; at = text.indexOf(high, at + 1)) {
      let k = at + 1;
      while (k < text.length && isDropped(text.charCodeAt(k))) k++;
      if (k > at + 1 && k < text.length) {
        const low = text.charCodeAt(k);
        if (low >= 0xdc00 && low <= 0xdfff) return true;
      }
    }
  return false;
}

/** The characters the skeleton drops: soft hyphen, combining grapheme joiner, zero-width characters and joiners. */
function isDropped(c: number): boolean {
  return (
    c === 0xad ||
    c === 0x34f ||
    c === 0x180e ||
    (c >= 0x200b && c <= 0x200f) ||
    (c >= 0x2060 && c <= 0x2064) ||
    c === 0xfeff
  );
}

function undisguise(match: string): string {
  const first = match.charCodeAt(0);
  if (isDropped(first)) return '';
  return (isFullWidth(first) && fullWidthFolded(match)) || match.normalize('NFKC');
}

/** The full-width forms of printable ASCII (U+FF01 to U+FF5E), which NFKC folds to it one for one. */
const isFullWidth = (c: number): boolean => c >= 0xff01 && c <= 0xff5e;

/**
 * A run of full-width forms as NFKC folds it (each to its ASCII character:
 * no two ASCII characters compose), without a call into the normaliser,
 * which costs more than the run for a short one; `undefined` when another
 * form is in the run.
 */
function fullWidthFolded(run: string): string | undefined {
  let folded = '';
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    if (!isFullWidth(c)) return undefined;
    folded += String.fromCharCode(c - 0xfee0);
  }
  return folded;
}

/** Cyrillic and Greek letters that look like Latin ones, by code point. */
const CONFUSABLE_GLYPHS: Readonly<Record<string, string>> = {
  // Cyrillic lower case
  '\u0430': 'a',
  '\u0432': 'b',
  '\u0435': 'e',
  '\u043a': 'k',
  '\u043c': 'm',
  '\u043d': 'h',
  '\u043e': 'o',
  '\u0440': 'p',
  '\u0441': 'c',
  '\u0442': 't',
  '\u0443': 'y',
  '\u0445': 'x',
  '\u0455': 's',
  '\u0456': 'i',
  '\u0458': 'j',
  '\u04bb': 'h',
  '\u0501': 'd',
  '\u051b': 'q',
  '\u051d': 'w',
  // Cyrillic upper case
  '\u0410': 'A',
  '\u0412': 'B',
  '\u0415': 'E',
  '\u041a': 'K',
  '\u041c': 'M',
  '\u041d': 'H',
  '\u041e': 'O',
  '\u0420': 'P',
  '\u0421': 'C',
  '\u0422': 'T',
  '\u0425': 'X',
  '\u0405': 'S',
  '\u0406': 'I',
  '\u0408': 'J',
  // Greek
  '\u03b1': 'a',
  '\u03bf': 'o',
  '\u03c1': 'p',
  '\u03c5': 'u',
  '\u03bd': 'v',
  '\u03b9': 'i',
  '\u03ba': 'k',
  '\u03c4': 't',
  '\u0391': 'A',
  '\u0392': 'B',
  '\u0395': 'E',
  '\u0396': 'Z',
  '\u0397': 'H',
  '\u0399': 'I',
  '\u039a': 'K',
  '\u039c': 'M',
  '\u039d': 'N',
  '\u039f': 'O',
  '\u03a1': 'P',
  '\u03a4': 'T',
  '\u03a5': 'Y',
  '\u03a7': 'X',
};

/**
 * The same, as the Latin letter's code by the look-alike's code (0 for a
 * unit that is none): a word of a million letters is folded with a load per
 * letter, not a map lookup.
 */
const CONFUSABLE = new Uint8Array(Math.max(...Object.keys(CONFUSABLE_GLYPHS).map((glyph) => glyph.charCodeAt(0))) + 1);
for (const [glyph, latin] of Object.entries(CONFUSABLE_GLYPHS)) CONFUSABLE[glyph.charCodeAt(0)] = latin.charCodeAt(0);

/** The Latin letter a look-alike reads as, or 0 for any other unit. */
const latinOf = (c: number): number => (c < CONFUSABLE.length ? (CONFUSABLE[c] as number) : 0);

/**
 * The text with disguises taken off: NFKC (full-width and mathematical
 * letters become plain ones), invisible characters and soft hyphens
 * removed, and in words that mix Latin with Cyrillic or Greek letters the
 * look-alikes read as Latin. Words wholly in one script keep their letters.
 * `undefined` when the skeleton is the text itself (always, for ASCII).
 */
export function skeleton(text: string): string | undefined {
  if (!DISGUISE.test(text)) return undefined;
  const folded = wholeSkeleton(text).join();
  return folded === text ? undefined : folded;
}

/** The skeleton of a text that holds a disguise, built by one replace over the whole text, as pieces. */
function wholeSkeleton(text: string): Pieces {
  const seen = { dropped: false };
  let bare = text.replace(UNDISGUISE, (match) => {
    const plain = undisguise(match);
    if (plain.length === 0) seen.dropped = true;
    return plain;
  });
  // A dropped character between the halves of a surrogate pair joins them: the letter they make is read too. (Asked
  // whenever a character was dropped: a ligature elsewhere can make up the length it took.)
  if (seen.dropped && splitsPair(text)) bare = bare.replace(UNDISGUISE, undisguise);
  return foldMixedWords(Pieces.of(bare));
}

/** `UNDISGUISE` matched where it stands, from a place given: the skeleton's rewriting started where the character scan saw one. */
const UNDISGUISE_AT = new RegExp(UNDISGUISE.source, 'uy');

/**
 * The skeleton, as `skeleton(text)` gives it, of a text whose characters
 * `scanCharacters` has just read into `disguises`: the rewriting runs from
 * each place it marked (every match of `UNDISGUISE` starts at one, since
 * each of its characters is marked where the scan reads it), so the
 * printable text between them is never searched; and a text with no marked
 * character and no Greek or Cyrillic letter is its own skeleton, unread.
 */
export function skeletonOf(text: string, disguises: Disguises): string | undefined {
  const view = skeletonView(text, disguises);
  if (view === undefined) return undefined;
  const joined = view.join();
  return joined === text ? undefined : joined;
}

/**
 * What `skeletonOf` gives, held as the pieces it is made of and never
 * joined: the scan reads its lower case (`Pieces.lower`, the one
 * whole-text string it builds) and takes excerpts from the pieces.
 * `undefined` when the text has nothing to rewrite; the pieces may spell
 * the text itself (a compatibility form NFKC leaves as it is), which reads
 * as the text does. Of the Greek and Cyrillic letters, only those the
 * character scan kept as look-alikes (`Disguises.lookalikes`) are read for
 * mixed words: a text in Greek or Russian is not searched letter by letter.
 */
export function skeletonView(text: string, disguises: Disguises): Pieces | undefined {
  const { count, at, lookalikes } = disguises;
  if (count === 0) {
    if (!disguises.greekOrCyrillic) return undefined;
    // Nothing rewritten: the skeleton's places are the text's, and only the look-alikes the scan kept are read.
    return foldMixedWords(Pieces.of(text), lookalikes.all ? undefined : lookalikes);
  }
  // Marks close together (a short string, or a text of disguises): one replace over the whole text costs less.
  if (count * disguises.sparse > text.length) return DISGUISE.test(text) ? wholeSkeleton(text) : undefined;
  const bare = new Pieces();
  // The look-alikes' places in the skeleton: the text's moved by what was rewritten before them, and any Greek or
  // Cyrillic letter a rewriting wrote (NFKC makes some).
  let places = lookalikes.all ? undefined : skeletonPlaces;
  skeletonPlaces.count = 0;
  let next = 0; // the next look-alike of the text to place
  let copied = 0;
  let dropped = false;
  let greekOrCyrillic = disguises.greekOrCyrillic;
  for (let k = 0; k < count; k++) {
    const start = at[k] as number;
    if (start < copied) continue; // inside the run matched before it
    UNDISGUISE_AT.lastIndex = start;
    const match = UNDISGUISE_AT.exec(text);
    if (match === null) continue;
    if (start > copied) next = copyPlaced(text, copied, start, bare, lookalikes, next, places);
    const plain = undisguise(match[0]);
    if (plain.length === 0) dropped = true;
    else {
      if (GREEK_CYRILLIC_ANY.test(plain)) {
        greekOrCyrillic = true;
        if (places !== undefined)
          for (let j = 0; j < plain.length; j++)
            if (isGreekOrCyrillic(plain.charCodeAt(j))) append(places, bare.length + j);
        // As many as the character scan keeps at most: past that, every Greek or Cyrillic letter is read.
        if (places !== undefined && disguises.sparse > 0 && places.count * disguises.sparse > text.length)
          places = undefined;
      }
      bare.push(plain);
    }
    copied = UNDISGUISE_AT.lastIndex;
  }
  if (copied < text.length) copyPlaced(text, copied, text.length, bare, lookalikes, next, places);
  // A dropped character between the halves of a surrogate pair: the whole-text definition, which reads it again.
  if (dropped && splitsPair(text)) return wholeSkeleton(text);
  if (!greekOrCyrillic) {
    bare.greek = false;
    return bare;
  }
  const folded = foldMixedWords(bare, places);
  // A huge text's places are let go once read: one such text does not keep their memory for good.
  if (skeletonPlaces.at.length > PLACES_KEPT) skeletonPlaces.at = new Int32Array(64);
  return folded;
}

/** Places `skeletonPlaces` keeps between texts (64 KiB). */
const PLACES_KEPT = 1 << 14;

/** The places of the skeleton being built where its mixed words may hold look-alikes, reused (scanning is synchronous). */
const skeletonPlaces: { count: number; at: Int32Array } = { count: 0, at: new Int32Array(64) };

/**
 * The text from `start` to `end` added to the skeleton as it is, with the
 * look-alikes it holds placed in the skeleton (from the `next` one on, when
 * `places` is kept): returns the next look-alike still to place.
 */
function copyPlaced(
  text: string,
  start: number,
  end: number,
  bare: Pieces,
  lookalikes: Lookalikes,
  next: number,
  places: { count: number; at: Int32Array } | undefined,
): number {
  let k = next;
  if (places !== undefined)
    for (; k < lookalikes.count && (lookalikes.at[k] as number) < end; k++) {
      const index = lookalikes.at[k] as number;
      if (index >= start) append(places, index - start + bare.length);
    }
  bare.push(text.slice(start, end));
  return k;
}

const GREEK_CYRILLIC_ANY = /[\u0370-\u052f]/;

/** A range of pieces this short is copied into one string of its own (young memory) rather than kept as its slices. */
const SHORT_RANGE = 256;

/**
 * A text held as the pieces it was built from (slices of the text as
 * written and what replaced its disguises), read without joining them into
 * one new string: on a long text, every whole-text string built costs far
 * more than reading it (fresh memory for each). Read by a cursor that moves
 * a piece at a time, or jumps by a binary search, so reading near the last
 * place read costs no search.
 */
export class Pieces {
  readonly parts: string[] = [];
  /** Where each part starts, and past the last one, its length. */
  readonly starts: number[] = [0];
  length = 0;
  /** Whether a part may hold a Greek or Cyrillic letter (unknown: true). */
  greek = true;
  private cursor = 0;

  /** One part: the text itself. */
  static of(text: string): Pieces {
    const pieces = new Pieces();
    pieces.push(text);
    return pieces;
  }

  /**
   * Adds `part` after the others; a short part after a short one is joined
   * to it, so that a text folded word by word is not read as a part per
   * word (each search of the pieces reads every part it passes).
   */
  push(part: string): void {
    if (part.length === 0) return;
    this.length += part.length;
    const last = this.parts.length - 1;
    const before = this.parts[last];
    if (before !== undefined && part.length <= SHORT_RANGE && before.length <= SHORT_RANGE) {
      this.parts[last] = before + part;
      this.starts[last + 1] = this.length;
      return;
    }
    this.parts.push(part);
    this.starts.push(this.length);
  }

  /**
   * The characters of `from` between `start` and `end`: as slices of its
   * parts, or one string when they are short (fewer parts to read later).
   */
  pushRange(from: Pieces, start: number, end: number): void {
    if (start >= end) return;
    if (end - start <= SHORT_RANGE) {
      this.push(from.slice(start, end));
      return;
    }
    from.seek(start);
    for (let k = from.cursor; k < from.parts.length && (from.starts[k] as number) < end; k++) {
      const at = from.starts[k] as number;
      const part = from.parts[k] as string;
      const a = Math.max(0, start - at);
      const b = Math.min(part.length, end - at);
      this.push(a === 0 && b === part.length ? part : part.slice(a, b));
    }
  }

  /** Moves the cursor to the part holding `index` (the last part past the end). */
  private seek(index: number): void {
    const { starts } = this;
    const last = this.parts.length - 1;
    let k = this.cursor;
    if (index >= (starts[k] as number) && (k >= last || index < (starts[k + 1] as number))) return;
    if (k < last && index >= (starts[k + 1] as number) && (k + 1 >= last || index < (starts[k + 2] as number))) {
      this.cursor = k + 1;
      return;
    }
    let low = 0;
    let high = last;
    while (low < high) {
      k = (low + high + 1) >> 1;
      if ((starts[k] as number) <= index) low = k;
      else high = k - 1;
    }
    this.cursor = low;
  }

  charCodeAt(index: number): number {
    const k = this.cursor;
    const start = this.starts[k] as number;
    // Most reads fall in the part read last (always, for one part).
    if (index >= start && index < (this.starts[k + 1] as number))
      return (this.parts[k] as string).charCodeAt(index - start);
    if (index < 0 || index >= this.length) return NaN;
    this.seek(index);
    return (this.parts[this.cursor] as string).charCodeAt(index - (this.starts[this.cursor] as number));
  }

  /** The characters from `start` to `end`: slices of the parts they span, joined. */
  slice(start: number, end: number): string {
    if (start >= end) return '';
    this.seek(start);
    let out = '';
    for (let k = this.cursor; k < this.parts.length && (this.starts[k] as number) < end; k++) {
      const from = this.starts[k] as number;
      out += (this.parts[k] as string).slice(Math.max(0, start - from), end - from);
    }
    return out;
  }

  /**
   * Where `search` stands first at or after `from`, or -1, as in the joined
   * text: one native search of each part, and where `search` is longer than
   * a character, the places where it would cross from a part into the next.
   */
  indexOf(search: string, from = 0): number {
    const start = Math.max(0, from);
    const m = search.length;
    if (m === 0) return Math.min(start, this.length);
    if (start >= this.length) return -1;
    this.seek(start);
    for (let k = this.cursor; k < this.parts.length; k++) {
      const at = this.starts[k] as number;
      const part = this.parts[k] as string;
      const found = part.indexOf(search, Math.max(0, start - at));
      if (found !== -1) return at + found;
      // A match found in a part starts before any that crosses its end.
      const end = at + part.length;
      for (let s = Math.max(start, end - m + 1); s < end; s++) if (this.matches(search, s)) return s;
    }
    return -1;
  }

  /** Whether `search` stands at `position` (clamped to the text, as `String.prototype.startsWith` does). */
  startsWith(search: string, position = 0): boolean {
    const at = Math.min(Math.max(position || 0, 0), this.length);
    return this.matches(search, at);
  }

  includes(search: string): boolean {
    return this.indexOf(search) !== -1;
  }

  /** Whether `search` stands at `at`, read unit by unit. */
  private matches(search: string, at: number): boolean {
    if (at + search.length > this.length) return false;
    for (let j = 0; j < search.length; j++) if (this.charCodeAt(at + j) !== search.charCodeAt(j)) return false;
    return true;
  }

  /** The next Greek or Cyrillic letter at or after `from`, or -1: one native search of each part from there. */
  nextGreekOrCyrillic(from: number): number {
    if (from >= this.length) return -1;
    this.seek(from);
    for (let k = this.cursor; k < this.parts.length; k++) {
      const start = this.starts[k] as number;
      GREEK_CYRILLIC.lastIndex = Math.max(0, from - start);
      const match = GREEK_CYRILLIC.exec(this.parts[k] as string);
      if (match !== null) return start + match.index;
    }
    return -1;
  }

  /** The text the pieces make, as one string (concatenated: the engine joins it once, where it is first read). */
  join(): string {
    return concat(this.parts);
  }

  /** `join().toLowerCase()`, as one string: `lowerView()` joined. */
  lower(): string {
    const lower = this.lowerView();
    return typeof lower === 'string' ? lower : lower.join();
  }

  /**
   * The lower case of the text, never joined where the parts lower-case
   * alike apart: the lower-cased parts, read through the same cursor (the
   * scan's signatures read it so; no whole-text string is made). Where they
   * do not, the joined text is lower-cased: a capital sigma in any part (its
   * lower case depends on the letters around it, final or not) and a
   * surrogate pair whose halves end one part and start the next (each half
   * alone is left as it is). A text of one part is its lower-cased part.
   */
  lowerView(): string | Pieces {
    const { parts } = this;
    if (parts.length === 1) return (parts[0] as string).toLowerCase();
    if (this.greek && parts.some((part) => part.includes('\u03a3'))) return this.join().toLowerCase();
    const lowered = new Pieces();
    lowered.greek = this.greek;
    let previous = 0; // the last code unit of the part before
    for (let k = 0; k < parts.length; k++) {
      const part = parts[k] as string;
      const first = part.charCodeAt(0);
      if (first >= 0xdc00 && first <= 0xdfff && previous >= 0xd800 && previous <= 0xdbff)
        return this.join().toLowerCase();
      previous = part.charCodeAt(part.length - 1);
      lowered.push(part.toLowerCase());
    }
    return lowered;
  }
}

/** The strings one after another: a concatenation (`Array.prototype.join` copied many short strings more slowly). */
function concat(parts: readonly string[]): string {
  let out = '';
  for (const part of parts) out += part;
  return out;
}

function isLatin(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7);
}

function isLetterOfWord(c: number): boolean {
  return isLatin(c) || isGreekOrCyrillic(c) || (c >= 0x300 && c <= 0x36f);
}

/** Greek and Cyrillic letters: the native search that finds the words to fold. */
const GREEK_CYRILLIC = /[\u0370-\u052f]/g;

/**
 * Each word with both Latin letters and look-alikes gets its look-alikes
 * read as Latin; only words with Greek or Cyrillic are read: those that
 * hold one of `lookalikes` (places in `text`, in order) when it is given,
 * else each found by a search. The text itself when no word is folded,
 * else new pieces: slices of its parts, and strings built from the folded
 * words and the short stretches between them.
 */
function foldMixedWords(text: Pieces, lookalikes?: { readonly count: number; readonly at: Int32Array }): Pieces {
  // One part (the whole-text skeleton) is read as the string it is, without the cursor.
  const read: Readable = text.parts.length === 1 ? (text.parts[0] as string) : text;
  let out: Folded | undefined;
  let copied = 0;
  let next = 0; // the next of `lookalikes` to read
  let found =
    lookalikes === undefined ? text.nextGreekOrCyrillic(0) : lookalikes.count > 0 ? (lookalikes.at[0] as number) : -1;
  while (found !== -1) {
    let start = found;
    let end = start + 1;
    while (start > copied && isLetterOfWord(read.charCodeAt(start - 1))) start--;
    while (end < text.length && isLetterOfWord(read.charCodeAt(end))) end++;
    let latin = false;
    let confusable = false;
    for (let j = start; j < end; j++) {
      const c = read.charCodeAt(j);
      if (isLatin(c)) latin = true;
      else if (latinOf(c) !== 0) confusable = true;
    }
    if (latin && confusable) {
      out ??= new Folded();
      out.copy(text, read, copied, start);
      out.fold(read, start, end);
      copied = end;
    }
    if (lookalikes === undefined) found = nextGreekOrCyrillicNear(text, read, end);
    else {
      while (next < lookalikes.count && (lookalikes.at[next] as number) < end) next++;
      found = next < lookalikes.count ? (lookalikes.at[next] as number) : -1;
    }
  }
  if (out === undefined) return text;
  out.copy(text, read, copied, text.length);
  return out.done();
}

type Readable = { charCodeAt(index: number): number };

/** How far past a word the next Greek or Cyrillic letter is looked for by a loop, before a native search. */
const NEAR = 64;

/**
 * `text.nextGreekOrCyrillic(from)`, read by a loop over the next `NEAR`
 * characters first: in a text of mixed words one after another, the native
 * search would make a match object per word.
 */
function nextGreekOrCyrillicNear(text: Pieces, read: Readable, from: number): number {
  const stop = Math.min(text.length, from + NEAR);
  for (let j = from; j < stop; j++) {
    const c = read.charCodeAt(j);
    if (isGreekOrCyrillic(c)) return j;
  }
  return text.nextGreekOrCyrillic(stop);
}

/**
 * The pieces `foldMixedWords` makes: folded words and the short stretches
 * between them are written as code units to a reused buffer, made a string
 * a chunk at a time (a text of mixed words makes no string per word); a
 * long stretch left as it is stays slices of the text's parts.
 */
class Folded {
  private readonly pieces = new Pieces();
  private n = 0;

  /** The text from `start` to `end`, as it is. */
  copy(text: Pieces, read: Readable, start: number, end: number): void {
    if (end - start > SHORT_RANGE) {
      this.flush();
      this.pieces.pushRange(text, start, end);
      return;
    }
    for (let j = start; j < end; j++) this.unit(read.charCodeAt(j));
  }

  /** The text from `start` to `end` with its look-alikes read as Latin. */
  fold(read: Readable, start: number, end: number): void {
    for (let j = start; j < end; j++) {
      const c = read.charCodeAt(j);
      const latin = latinOf(c);
      this.unit(latin === 0 ? c : latin);
    }
  }

  done(): Pieces {
    this.flush();
    return this.pieces;
  }

  private unit(code: number): void {
    foldCodes[this.n++] = code;
    if (this.n === FOLD_CHUNK) this.flush();
  }

  private flush(): void {
    if (this.n === 0) return;
    this.pieces.push(foldedString(this.n));
    this.n = 0;
  }
}

/** The code units `Folded` builds a string from, and `rot13` turns, reused (scanning is synchronous). */
const FOLD_CHUNK = 8_192;
const foldCodes = new Uint16Array(FOLD_CHUNK);
const foldBytes = Buffer.from(foldCodes.buffer);

/**
 * The string of the first `n` units of `foldCodes`, copied natively: over
 * ten times faster for a full chunk than `String.fromCharCode.apply`, which
 * costs about 5 ns a unit (a big-endian machine takes that way, as the
 * bytes are read little-endian). Every code unit, a lone surrogate too,
 * comes back as it was.
 */
function foldedString(n: number): string {
  // `apply` reads the codes as an array-like; a spread would step an iterator through them.
  if (!LITTLE_ENDIAN) return String.fromCharCode.apply(null, foldCodes.subarray(0, n) as unknown as number[]);
  return foldBytes.toString('utf16le', 0, 2 * n);
}

/** How a span was written. */
export type Encoding = 'base64' | 'hex' | 'percent' | 'decimal' | 'rot13';

export interface DecodedSpan {
  readonly encoding: Encoding;
  /** Where the encoded span starts in the text. */
  readonly start: number;
  /** What it says. */
  readonly text: string;
}

/** Bounds on decoding, per text: spans looked at, and characters decoded in all. */
export const DECODE_LIMITS = Object.freeze({ spans: 32, chars: 32_768, minDecoded: 8 });

/** Shortest run of the base64 alphabet read as a base64 (or hex) span. */
const MIN_BASE64_RUN = 16;
/**
 * The shortest text that holds a span of an encoding other than ROT13: 16
 * characters of base64, or four percent escapes and four characters between
 * them (byte lists and decimal codes need 23, `\\x` escapes 32).
 */
export const SHORTEST_SPAN = 16;
const NO_RUNS: readonly number[] = Object.freeze([]);
/**
 * What the decimal decoder needs to have anything to read; the byte-list
 * decoder's is a closed `nextByteList` (escapes and percent signs are
 * looked for with `includes`, base64 runs by `base64Runs`, ROT13's name by
 * `namesRot13`). Most strings stop here. This gate runs first: digits are
 * rare in prose, so the engine skips most of a text for it.
 */
export const DECIMAL_CODES = /\d{2,3}[ ,]{1,3}\d{2,3}[ ,]{1,3}\d{2,3}/;
const HEX_ESCAPES = /(?:\\x[0-9A-Fa-f]{2}){4,}/g;
const ROT13_ANNOUNCED = /\brot[- ]?13\b/i;

/**
 * The spans of `text` written in an encoding that decode to readable text:
 * base64 (standard and URL-safe), hex (a run of digits or `\x` escapes),
 * percent-encoding, decimal character codes, and the whole text in ROT13
 * when the text names ROT13. Decoding stops at `DECODE_LIMITS`. A text
 * shorter than `SHORTEST_SPAN` is only searched for ROT13's name, unless
 * `anyLength` (for tests: what every search would find).
 */
export function decodeSpans(text: string, anyLength = false): DecodedSpan[] {
  // Every encoding but ROT13 needs `SHORTEST_SPAN` characters for a span that decodes to `minDecoded`: a shorter
  // text (most strings of a schema) is searched for ROT13's name only.
  const long = anyLength || text.length >= SHORTEST_SPAN;
  const runs = long ? base64Runs(text) : NO_RUNS;
  const percents = long && text.includes('%');
  const escapes = long && text.includes('\\');
  // Byte lists and decimal codes each hold what these searches find: without it, neither is read.
  const decimals = long && DECIMAL_CODES.test(text);
  const numbers = decimals || (long && nextByteList(text, 0, true) !== -1);
  const rot13Named = namesRot13(text);
  if (runs.length === 0 && !percents && !escapes && !numbers && !rot13Named) return [];
  const spans: DecodedSpan[] = [];
  let budget: number = DECODE_LIMITS.chars;
  const keep = (encoding: Encoding, start: number, decoded: string | undefined): boolean => {
    if (decoded === undefined) return true;
    const bounded = decoded.slice(0, budget);
    budget -= bounded.length;
    spans.push({ encoding, start, text: bounded });
    return spans.length < DECODE_LIMITS.spans && budget > 0;
  };
  for (let r = 0; r < runs.length; r += 2) {
    const start = runs[r] as number;
    const run = text.slice(start, runs[r + 1]);
    const hex = isHexRun(run);
    if (!hex && !mixesCase(run)) continue;
    const decoded = hex ? readable(Buffer.from(run, 'hex')) : readable(Buffer.from(run, 'base64'));
    if (!keep(hex ? 'hex' : 'base64', start, decoded)) return spans;
  }
  if (escapes)
    for (const match of text.matchAll(HEX_ESCAPES)) {
      const bytes = Buffer.from(match[0].replace(/\\x/g, ''), 'hex');
      if (!keep('hex', match.index, readable(bytes))) return spans;
    }
  if (numbers)
    for (const [start, bytes] of byteLists(text)) {
      if (!keep('hex', start, readable(bytes))) return spans;
    }
  if (percents)
    for (const [start, decoded] of percentRuns(text)) {
      if (!keep('percent', start, decoded)) return spans;
    }
  if (decimals)
    for (const [start, bytes] of decimalRuns(text)) {
      if (!keep('decimal', start, readable(bytes))) return spans;
    }
  if (rot13Named && ROT13_ANNOUNCED.test(text)) keep('rot13', 0, rot13(text.slice(0, DECODE_LIMITS.chars)));
  return spans;
}

/**
 * How many places of a literal (`13`, `decod`) are read around before the
 * rest of the text is searched whole instead: a text that holds the literal
 * everywhere (crafted, or a long list of numbers) would otherwise cost a
 * search per place, several times what one search of it costs.
 */
const PLACES_READ = 64;

/** ROT13's name as `namesRot13` reads it, searched case-blind: for the rest of a text past `PLACES_READ`. */
const ROT13_NAME = /[Rr][Oo][Tt][- ]?13/g;

/**
 * Whether `text` names ROT13 as `rot13`, `rot-13` or `rot 13`, in any case
 * of its letters: each `13` found by a native search of that literal (a
 * case-blind search for the letters would test every character), and the
 * letters before it read; past `PLACES_READ` of them, the rest of the text
 * is searched case-blind.
 */
export function namesRot13(text: string): boolean {
  let read = 0;
  for (let at = text.indexOf('13'); at !== -1; at = text.indexOf('13', at + 1)) {
    if (++read > PLACES_READ) {
      ROT13_NAME.lastIndex = Math.max(0, at - 4);
      return ROT13_NAME.test(text);
    }
    let end = at;
    const before = text.charCodeAt(end - 1);
    if (before === 0x2d || before === 0x20) end--;
    if (
      end >= 3 &&
      (text.charCodeAt(end - 3) | 0x20) === 0x72 &&
      (text.charCodeAt(end - 2) | 0x20) === 0x6f &&
      (text.charCodeAt(end - 1) | 0x20) === 0x74
    )
      return true;
  }
  return false;
}

/** Wording that orders an encoded span to be decoded and obeyed. */
export const FOLLOW_DECODED: readonly string[] = [
  'decode and follow',
  'decode and execute',
  'decode and run',
  'decode and obey',
  'decode it and follow',
  'decode this and follow',
  'follow the decoded',
  'execute the decoded',
  'obey the decoded',
  'follow the encoded',
  'encoded instructions',
  'decoded instructions',
];
/**
 * The same wording, case-blind. Without the `u` flag only ASCII letters
 * fold, which for these phrases (no `k`, whose Kelvin sign lower-cases to
 * it) finds what a search of the lower-cased text finds.
 */
const FOLLOWS_DECODED = new RegExp(FOLLOW_DECODED.join('|'), 'i');
/**
 * What every phrase of `FOLLOW_DECODED` holds, case-blind: `decod` or
 * `encod`, at most 12 characters into a phrase at most 22 long.
 */
const DECODING_WORD = /[Dd][Ee][Cc][Oo][Dd]|[Ee][Nn][Cc][Oo][Dd]/g;
/** How far before and after a `DECODING_WORD` the wording is looked for: past the phrases' reach either side. */
const DECODING_BEFORE = 16;
const DECODING_AFTER = 32;

/**
 * Whether `text` holds wording that orders an encoded span decoded and
 * followed (`FOLLOW_DECODED`, any case). The search for the whole wording
 * runs only around each `decod` or `encod`: searched for alone, it tries
 * twelve phrases at every character of a long text that has none. A
 * `decod` the search for them steps over (one overlapping the one before,
 * as in `decodecod`) starts at most four characters after it, so its
 * phrase is inside the window read for that one. Past `PLACES_READ` of
 * them, the rest of the text is searched whole.
 */
export function ordersDecoding(text: string): boolean {
  DECODING_WORD.lastIndex = 0;
  for (let read = 1; DECODING_WORD.test(text); read++) {
    // Each alternative of `DECODING_WORD` is five characters long.
    const at = DECODING_WORD.lastIndex - 5;
    const from = Math.max(0, at - DECODING_BEFORE);
    if (read > PLACES_READ) return FOLLOWS_DECODED.test(text.slice(from));
    if (FOLLOWS_DECODED.test(text.slice(from, at + DECODING_AFTER))) return true;
  }
  return false;
}

/**
 * The maximal runs of the base64 alphabet (standard and URL-safe) at least
 * `MIN_BASE64_RUN` long, each with up to two `=` of padding after it, as
 * start and end pairs. A run must fill the window of `MIN_BASE64_RUN`
 * characters from where it may start, so the window is read from its end
 * back: the first character outside the alphabet moves the next window past
 * it, and what a window found in the alphabet is not read again. Prose has a
 * space every few letters, so most characters are never read; none is read
 * twice.
 */
export function base64Runs(text: string): number[] {
  const runs: number[] = [];
  const length = text.length;
  let start = 0; // no run starts before here
  let known = -1; // text[start..known] is known to be in the alphabet
  while (start + MIN_BASE64_RUN <= length) {
    const last = start + MIN_BASE64_RUN - 1;
    const floor = known >= start ? known : start - 1;
    let j = last;
    while (j > floor && inBase64(text.charCodeAt(j))) j--;
    if (j > floor) {
      known = last;
      start = j + 1;
      continue;
    }
    let end = last + 1;
    while (end < length && inBase64(text.charCodeAt(end))) end++;
    const stop = end;
    while (end < length && end - stop < 2 && text.charCodeAt(end) === 0x3d) end++;
    runs.push(start, end);
    start = end;
  }
  return runs;
}

function inBase64(c: number): boolean {
  return c < 0x80 && BASE64_CODE[c] === 1;
}

/** 1 for each ASCII character of the base64 alphabets (standard and URL-safe). */
const BASE64_CODE = Uint8Array.from({ length: 0x80 }, (_, c) =>
  (c >= 0x61 && c <= 0x7a) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c >= 0x30 && c <= 0x39) ||
  c === 0x2b ||
  c === 0x2f ||
  c === 0x5f ||
  c === 0x2d
    ? 1
    : 0,
);

function isHexRun(run: string): boolean {
  if (run.length % 2 !== 0) return false;
  for (let i = 0; i < run.length; i++) if (hexValue(run.charCodeAt(i)) < 0) return false;
  return true;
}

/** Base64 of prose has capitals all through it (the high bits of most letters); identifiers and words do not. */
function mixesCase(run: string): boolean {
  let upper = 0;
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) upper++;
  }
  return upper * 8 >= run.length && upper < run.length;
}

/** UTF-8 bytes that read as prose (letters and spaces, few controls), as text; else `undefined`. */
function readable(bytes: Buffer): string | undefined {
  if (bytes.length < DECODE_LIMITS.minDecoded) return undefined;
  const decoded = bytes.toString('utf8');
  let letters = 0;
  let spaces = 0;
  let bad = 0;
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded.charCodeAt(i);
    if (c === 0x20) spaces++;
    else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c >= 0xc0) letters++;
    if ((c < 0x20 && c !== 0x0a && c !== 0x09 && c !== 0x0d) || c === 0xfffd || (c >= 0x7f && c < 0xa0)) bad++;
  }
  const prose = spaces > 0 || decoded.length < 24;
  return bad === 0 && prose && letters * 2 >= decoded.length ? decoded : undefined;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** What `nextByteList` reads a character as: 1 a hex digit, 2 a byte separator, 3 anything else. */
const BYTE_CLASS = Uint8Array.from({ length: 0x80 }, (_, c) => (hexValue(c) >= 0 ? 1 : isByteSeparator(c) ? 2 : 3));
const byteClass = (c: number): number => (c < 0x80 ? (BYTE_CLASS[c] as number) : 3);
/** The last three reads hex digits, or separators, and the last two separators (two bits a read, the last lowest). */
const THREE_DIGITS = 0b01_01_01;
const THREE_SEPARATORS = 0b10_10_10;
const TWO_SEPARATORS = 0b10_10;

/**
 * Where three hex bytes separated by a space, colon or comma (`4a 6b:7c`)
 * first stand at or after `from`, -1 for nowhere, reading one character in
 * three; `closed`, only those with a separator after the third byte too
 * (`4a 6b 7c `). A list at `s` has hex digits at `s`, `s + 3` and `s + 6`,
 * and at `s + 1`, `s + 4` and `s + 7`, and separators at `s + 2`, `s + 5`
 * (and `s + 8`): whichever of its characters the reads fall on, its last
 * read finds three digits, or two separators (three when closed), in a row
 * (`nextByteRead`), and only at such a read are the starts it can finish (7
 * and 6 characters back, or 5, or 8 when closed) checked whole. A list that
 * starts earlier is finished by the same read or an earlier one, and the
 * starts of one read are checked in order, so the first found is the first.
 * (A regular expression tries every character: on real servers' text it
 * took 2.9 ms per MB for the closed form, these reads 1.2; about four
 * characters in ten of English prose are hex digits or separators.)
 */
export function nextByteList(text: string, from: number, closed = false): number {
  const start = Math.max(0, from);
  const separators = closed ? THREE_SEPARATORS : TWO_SEPARATORS;
  const mask = closed ? 0x3f : 0xf;
  for (let p = nextByteRead(text, start, 0, separators, mask); p !== -1;) {
    const reads = byteReadsAt(text, start, p);
    if (reads === THREE_DIGITS) {
      if (p - 7 >= start && byteListAt(text, p - 7, closed)) return p - 7;
      if (p - 6 >= start && byteListAt(text, p - 6, closed)) return p - 6;
    } else {
      const s = closed ? p - 8 : p - 5;
      if (s >= start && byteListAt(text, s, closed)) return s;
    }
    p = nextByteRead(text, p + 3, reads, separators, mask);
  }
  return -1;
}

/**
 * The next read, one character in three from `p`, after which the last
 * three reads were hex digits, or the last reads under `mask` were
 * `separators`; -1 past the text's end. `reads` holds the classes of the
 * reads before `p` (two bits a read, the last lowest). The loop is all it
 * runs. The checks of a list's starts stay out of it: the engine compiles a
 * long loop while it runs, and the first long text may reach those checks
 * only after that, when the compiled loop has no record of what their
 * arithmetic sees; each would then send the loop back to the interpreter
 * for the rest of that text (2.7 ms per MB against 1.2).
 */
function nextByteRead(text: string, p: number, reads: number, separators: number, mask: number): number {
  for (; p < text.length; p += 3) {
    const c = text.charCodeAt(p);
    reads = ((reads << 2) | byteClass(c)) & 0x3f;
    if (reads === THREE_DIGITS || (reads & mask) === separators) return p;
  }
  return -1;
}

/** The classes of the reads from `start` up to `p` (`p` and the two before it, those at or after `start`). */
function byteReadsAt(text: string, start: number, p: number): number {
  let reads = 0;
  for (let q = Math.max(start, p - 6); q <= p; q += 3) {
    const c = text.charCodeAt(q);
    reads = (reads << 2) | byteClass(c);
  }
  return reads;
}

/**
 * Whether three separated hex bytes start at `s` (followed by a separator,
 * when `closed`). The first separator is read first: a run of hex digits
 * fails there, and a run of separators at the first byte after it.
 */
function byteListAt(text: string, s: number, closed: boolean): boolean {
  return (
    s + (closed ? 9 : 8) <= text.length &&
    isByteSeparator(text.charCodeAt(s + 2)) &&
    isHexByte(text, s) &&
    isByteSeparator(text.charCodeAt(s + 5)) &&
    isHexByte(text, s + 3) &&
    isHexByte(text, s + 6) &&
    (!closed || isByteSeparator(text.charCodeAt(s + 8)))
  );
}

function isHexByte(text: string, i: number): boolean {
  return hexValue(text.charCodeAt(i)) >= 0 && hexValue(text.charCodeAt(i + 1)) >= 0;
}

/** Runs of at least eight two-digit hex bytes separated by a space, colon or comma (`69 67 6e 6f ...`). */
function* byteLists(text: string): Generator<[number, Buffer]> {
  let i = 0;
  while (i + 1 < text.length) {
    if (!startsByteList(text, i)) {
      const next = nextByteList(text, i + 1);
      if (next === -1) return;
      i = next;
      if (!startsByteList(text, i)) i++;
      continue;
    }
    const start = i;
    const bytes: number[] = [];
    while (i + 1 < text.length) {
      const high = hexValue(text.charCodeAt(i));
      const low = hexValue(text.charCodeAt(i + 1));
      if (high < 0 || low < 0 || isHexLetterOrDigit(text.charCodeAt(i + 2))) break;
      if (i > start && !isByteSeparator(text.charCodeAt(i - 1))) break;
      bytes.push(high * 16 + low);
      i += 2;
      if (!isByteSeparator(text.charCodeAt(i))) break;
      i++;
    }
    if (bytes.length >= DECODE_LIMITS.minDecoded) yield [start, Buffer.from(bytes)];
    if (i === start) i++;
  }
}

/** A two-digit hex byte at `i`, on its own, followed by a separator. */
function startsByteList(text: string, i: number): boolean {
  return (
    hexValue(text.charCodeAt(i)) >= 0 &&
    hexValue(text.charCodeAt(i + 1)) >= 0 &&
    isByteSeparator(text.charCodeAt(i + 2)) &&
    !isHexLetterOrDigit(text.charCodeAt(i - 1))
  );
}

function isHexLetterOrDigit(c: number): boolean {
  return hexValue(c) >= 0;
}

function isByteSeparator(c: number): boolean {
  return c === 0x20 || c === 0x3a || c === 0x2c;
}

/** Runs holding at least four `%XX` escapes, each at most three characters from the next. */
function* percentRuns(text: string): Generator<[number, string]> {
  let from = text.indexOf('%');
  while (from !== -1) {
    let escapes = 0;
    let end = from;
    let at = from;
    while (
      at !== -1 &&
      at - end <= 3 &&
      hexValue(text.charCodeAt(at + 1)) >= 0 &&
      hexValue(text.charCodeAt(at + 2)) >= 0
    ) {
      escapes++;
      end = at + 3;
      at = text.indexOf('%', end);
    }
    if (escapes >= 4) {
      const decoded = readable(Buffer.from(percentBytes(text.slice(from, end))));
      if (decoded !== undefined) yield [from, decoded];
    }
    from = at === -1 ? -1 : at === from ? text.indexOf('%', from + 1) : at;
  }
}

function percentBytes(span: string): number[] {
  const bytes: number[] = [];
  for (let i = 0; i < span.length; i++) {
    const c = span.charCodeAt(i);
    if (c === 0x25) {
      bytes.push(hexValue(span.charCodeAt(i + 1)) * 16 + hexValue(span.charCodeAt(i + 2)));
      i += 2;
    } else bytes.push(c === 0x2b ? 0x20 : c & 0x7f);
  }
  return bytes;
}

/** Three separated decimal codes: where a run may start, found by one native search. */
const DECIMAL_RUN = /\d{2,3}[ ,]{1,3}\d{2,3}[ ,]{1,3}\d{2,3}/g;

/** Runs of at least eight decimal character codes (32-126) separated by spaces or commas. */
export function* decimalRuns(text: string): Generator<[number, Buffer]> {
  let i = 0;
  const length = text.length;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39 || (i > 0 && isDigit(text.charCodeAt(i - 1)))) {
      DECIMAL_RUN.lastIndex = i + 1;
      const next = DECIMAL_RUN.exec(text);
      if (next === null) return;
      i = next.index;
      if (i > 0 && isDigit(text.charCodeAt(i - 1))) i++;
      continue;
    }
    const start = i;
    const codes: number[] = [];
    for (;;) {
      let value = 0;
      let digits = 0;
      while (i < length && isDigit(text.charCodeAt(i)) && digits < 4) {
        value = value * 10 + text.charCodeAt(i) - 0x30;
        digits++;
        i++;
      }
      if (digits === 0 || digits > 3 || value < 32 || value > 126) break;
      codes.push(value);
      let separators = 0;
      while (i < length && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x2c) && separators < 3) {
        i++;
        separators++;
      }
      if (separators === 0) break;
    }
    if (codes.length >= DECODE_LIMITS.minDecoded) yield [start, Buffer.from(codes)];
    if (i === start) i++;
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * `text` in ROT13, a chunk at a time through `foldCodes` (free outside a
 * skeleton's build): each chunk copied in natively, its ASCII units turned
 * through a table, and copied out as one string.
 */
function rot13(text: string): string {
  let out = '';
  for (let from = 0; from < text.length; from += FOLD_CHUNK) {
    const n = Math.min(FOLD_CHUNK, text.length - from);
    if (LITTLE_ENDIAN) foldBytes.write(text.slice(from, from + n), 0, 'utf16le');
    else for (let k = 0; k < n; k++) foldCodes[k] = text.charCodeAt(from + k);
    for (let k = 0; k < n; k++) {
      const c = foldCodes[k] as number;
      if (c < 0x80) foldCodes[k] = ROT13_ASCII[c] as number;
    }
    out += foldedString(n);
  }
  return out;
}

/** Each ASCII code unit in ROT13: a letter of either case 13 places on, anything else as it is. */
const ROT13_ASCII = Uint16Array.from({ length: 0x80 }, (_, c) => {
  const letter = (c | 0x20) - 0x61; // 0 to 25 for an ASCII letter of either case, and only for one
  return letter >= 0 && letter < 26 ? c - letter + ((letter + 13) % 26) : c;
});

/** Encodes `text` the way `decodeSpans` reads it back: for tests and the corpus. */
export function encodeAs(encoding: Encoding, text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  switch (encoding) {
    case 'base64':
      return bytes.toString('base64');
    case 'hex':
      return bytes.toString('hex');
    case 'percent':
      return [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
    case 'decimal':
      return [...bytes].join(' ');
    case 'rot13':
      return rot13(text);
  }
}
