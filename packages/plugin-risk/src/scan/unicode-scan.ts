import { PoisonPattern } from './patterns.js';

/** Receives the index of a character-level finding. */
export type Report = (pattern: PoisonPattern, index: number) => void;

const ZWNJ = 0x200c;
const ZWJ = 0x200d;
const BLACK_FLAG = 0x1f3f4;
const CANCEL_TAG = 0xe007f;

/** Anything but printable ASCII, tab, line feed and carriage return: the only characters this scan can report. */
const NOTABLE = /[^\x20-\x7e\t\n\r]/g;

/**
 * One pass over the UTF-16 code units of `text`, reporting invisible,
 * reordering, smuggling and control characters. Emoji flag sequences, emoji
 * ZWJ sequences, a single variation selector after its base, and ZWNJ and
 * ZWJ inside the scripts whose spelling needs them are left alone. A native
 * search jumps from one notable character to the next; of the plain text in
 * between, only the word running on from the previous notable character and
 * the word touching the next one are read (for mixed-script words), so every
 * character is looked at a bounded number of times. Returns whether the
 * text holds any character but printable ASCII, tab, line feed and carriage
 * return (when it does not, nothing else about its characters needs reading).
 */
export function scanCharacters(text: string, report: Report, disguises?: Disguises): boolean {
  if (disguises !== undefined) {
    disguises.count = 0;
    disguises.greekOrCyrillic = false;
    disguises.lookalikes.count = 0;
    disguises.lookalikes.all = false;
  }
  let match = nextNotable(text, 0);
  if (match === null) return false;
  const runs = disguises === undefined ? undefined : RUNS.reset(text, disguises.lookalikes, disguises.sparse);
  const length = text.length;
  let previous = -1; // the previous code point, -1 at the start
  let wordLatin = false;
  let wordCyrillic = false;
  let wordFlagged = false;
  let wordStart = 0;
  let i = 0; // the next index to read
  for (;;) {
    const notable = match === null ? length : match.index;
    if (notable > i) {
      runs?.plain(i, notable);
      // Plain ASCII from i to the notable character: the word open at i runs on to the first
      // separator; a separator ends it, and the word touching the notable character starts.
      let p = i;
      if (wordLatin || wordCyrillic) {
        for (let c = text.charCodeAt(p); p < notable && isAsciiAlnum(c); c = text.charCodeAt(++p))
          wordLatin ||= isAsciiLetter(c);
        if (wordLatin && wordCyrillic && !wordFlagged) {
          wordFlagged = true;
          report(PoisonPattern.UNICODE_HOMOGLYPH_RISK, wordStart);
        }
      }
      let k = notable;
      while (k > p && isAsciiAlnum(text.charCodeAt(k - 1))) k--;
      if (p < notable) wordLatin = wordCyrillic = wordFlagged = false;
      for (let j = k; j < notable; j++) {
        if (!isAsciiLetter(text.charCodeAt(j))) continue;
        if (!wordLatin && !wordCyrillic) wordStart = j;
        wordLatin = true;
        if (wordCyrillic && !wordFlagged) {
          wordFlagged = true;
          report(PoisonPattern.UNICODE_HOMOGLYPH_RISK, wordStart);
        }
      }
      previous = text.charCodeAt(notable - 1);
      i = notable;
    }
    if (match === null || i >= length) {
      runs?.finish();
      return true;
    }
    let cp = text.charCodeAt(i);
    const at = i;
    let next = i + 1;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      const low = text.charCodeAt(i + 1);
      if (cp <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        next = i + 2;
      } else {
        report(PoisonPattern.UNICODE_LONE_SURROGATE, at);
        runs?.end();
        previous = cp;
        wordLatin = wordCyrillic = wordFlagged = false;
        i = next;
        match = nextNotable(text, i);
        continue;
      }
    }
    if (disguises !== undefined) {
      if (isGreekOrCyrillic(cp)) disguises.greekOrCyrillic = true;
      else if (isUndisguised(cp)) mark(disguises, at, length);
      runs?.notable(cp, at);
    }
    const latin = isLatinLetter(cp);
    const cyrillic = !latin && cp >= 0x0400 && cp <= 0x052f;
    if (latin || cyrillic) {
      if (!wordLatin && !wordCyrillic) wordStart = at;
      wordLatin ||= latin;
      wordCyrillic ||= cyrillic;
      if (wordLatin && wordCyrillic && !wordFlagged) {
        wordFlagged = true;
        report(PoisonPattern.UNICODE_HOMOGLYPH_RISK, wordStart);
      }
    } else {
      wordLatin = wordCyrillic = wordFlagged = false;
    }
    let skipped = false;
    if (cp === BLACK_FLAG) {
      const end = flagTagEnd(text, next);
      if (end > 0) {
        next = end;
        previous = CANCEL_TAG;
        skipped = true;
      }
    }
    if (!skipped) {
      const pattern = classify(cp, previous, text, next);
      if (pattern !== undefined) report(pattern, at);
      previous = cp;
    }
    i = next;
    match = nextNotable(text, i);
  }
}

/**
 * What the character scan saw that the skeleton needs (filled when it is
 * given one): where each character the skeleton rewrites stands (a
 * compatibility form NFKC folds, or one it drops), in order, and whether
 * any Greek or Cyrillic letter stands in the text. The skeleton then
 * starts its rewriting at those places instead of searching the whole text.
 */
export interface Disguises {
  count: number;
  at: Int32Array;
  greekOrCyrillic: boolean;
  /**
   * The skeleton is built from the marks only where there is at most one
   * per this many characters; past that the scan stops marking (a text of
   * disguises would mark nearly every character for nothing).
   */
  readonly sparse: number;
  /** Where the skeleton's mixed words may hold look-alikes (`Lookalikes`). */
  readonly lookalikes: Lookalikes;
}

/**
 * Where each Greek or Cyrillic letter stands in a run of letters that also
 * holds a Latin letter or a character the skeleton rewrites, in order: the
 * only places where a word of the skeleton can mix Latin with look-alikes.
 * A run is read wider than a word (letters, digits, combining marks and
 * every character the skeleton rewrites or drops), so each word of the
 * skeleton lies in one. `all` when they were not kept (more than one per
 * `sparse` characters): every Greek or Cyrillic letter is then read.
 */
export interface Lookalikes {
  count: number;
  at: Int32Array;
  all: boolean;
}

/** Marks for the character scan; `sparse` 0 keeps every mark (for tests). */
export function disguisesBuffer(sparse = 64): Disguises {
  return {
    count: 0,
    at: new Int32Array(64),
    greekOrCyrillic: false,
    sparse,
    lookalikes: { count: 0, at: new Int32Array(64), all: false },
  };
}

/**
 * The runs of letters the character scan reads (`Lookalikes`). A run is
 * followed only once a Greek or Cyrillic letter opens it, what stands
 * before that letter in the run read back then: a text without those
 * letters costs nothing here, nor do the stretches between its runs. The
 * run's Greek and Cyrillic letters are kept as it is read, and dropped at
 * its end unless it held a Latin letter or a rewritten character too.
 */
class LetterRuns {
  private text = '';
  private list: Lookalikes = { count: 0, at: new Int32Array(0), all: true };
  private sparse = 0;
  private open = false;
  private latin = false;
  private from = 0; // the run's first place in the list

  /** Ready to read `text`, its look-alikes kept in `list`. */
  reset(text: string, list: Lookalikes, sparse: number): this {
    this.text = text;
    this.list = list;
    this.sparse = sparse;
    this.open = false;
    return this;
  }

  /** Printable ASCII from `start` to `end`: letters and digits carry an open run on, anything else ends it. */
  plain(start: number, end: number): void {
    if (!this.open || this.list.all) return;
    const text = this.text;
    let p = start;
    for (let c = text.charCodeAt(p); p < end && isAsciiAlnum(c); c = text.charCodeAt(++p))
      this.latin ||= isAsciiLetter(c);
    if (p < end) this.end();
  }

  /** A character beyond printable ASCII at `at`. */
  notable(cp: number, at: number): void {
    if (this.list.all) return; // not kept past their bound: nothing left to follow
    const greekOrCyrillic = isGreekOrCyrillic(cp);
    if (!this.open) {
      if (!greekOrCyrillic) return;
      this.open = true;
      this.from = this.list.count;
      this.latin = latinBefore(this.text, at);
    } else if (!greekOrCyrillic) {
      const kind = inRun(cp);
      if (kind === RUN_LATIN) this.latin = true;
      else if (kind === RUN_END) this.end();
      return;
    }
    this.keep(at);
  }

  /** Closes the open run: its letters are dropped unless it mixed. */
  end(): void {
    if (this.open && !this.latin) this.list.count = this.from;
    this.open = false;
  }

  /** Closes the last run and lets go of the text: nothing of it is kept past its scan. */
  finish(): void {
    this.end();
    this.text = '';
  }

  private keep(at: number): void {
    const list = this.list;
    if (this.sparse > 0 && list.count * this.sparse > this.text.length) list.all = true;
    else append(list, at);
  }
}

/** The runs of the text being read (scanning is synchronous): one reader, reset for each text. */
const RUNS = new LetterRuns();

/**
 * Whether the run of letters ending before `at` holds a Latin letter or a
 * character the skeleton rewrites, read back to the run's start (letters,
 * digits, combining marks and rewritten characters carry it; none of them
 * is Greek or Cyrillic, or the run would be open already).
 */
function latinBefore(text: string, at: number): boolean {
  for (let k = at - 1; k >= 0; k--) {
    let cp = text.charCodeAt(k);
    if (cp < 0x80) {
      if (isAsciiLetter(cp)) return true;
      if (!isAsciiAlnum(cp)) return false;
      continue;
    }
    if (cp >= 0xdc00 && cp <= 0xdfff && k > 0) {
      const high = text.charCodeAt(k - 1);
      if (high < 0xd800 || high > 0xdbff) return false; // a lone half
      cp = 0x10000 + ((high - 0xd800) << 10) + (cp - 0xdc00);
      k--;
    }
    const kind = inRun(cp);
    if (kind !== RUN_MARK) return kind === RUN_LATIN;
  }
  return false;
}

/** A Greek or Cyrillic letter (or mark of those blocks): where look-alikes of Latin letters come from. */
export function isGreekOrCyrillic(c: number): boolean {
  return c >= 0x370 && c <= 0x52f;
}

const RUN_END = 0;
const RUN_MARK = 1;
const RUN_LATIN = 2;

/**
 * How a code point beyond ASCII that is not Greek or Cyrillic stands in a
 * run of letters: a Latin letter or a character the skeleton rewrites
 * (`RUN_LATIN`), a combining mark that carries the run on (`RUN_MARK`), or
 * anything else, which ends it (`RUN_END`).
 */
function inRun(cp: number): number {
  if (isLatinLetter(cp) || isUndisguised(cp)) return RUN_LATIN;
  return cp >= 0x300 && cp < 0x370 ? RUN_MARK : RUN_END;
}

function mark(disguises: Disguises, index: number, length: number): void {
  if (disguises.count * disguises.sparse > length) return; // too close together: the marks will not be read
  append(disguises, index);
}

/** A list of places (`Disguises`, `Lookalikes`, the skeleton's): `index` after the others, its buffer doubled when full. */
export function append(list: { count: number; at: Int32Array }, index: number): void {
  if (list.count === list.at.length) {
    const grown = new Int32Array(list.at.length * 2);
    grown.set(list.at);
    list.at = grown;
  }
  list.at[list.count++] = index;
}

/**
 * The code points the skeleton rewrites (`UNDISGUISE` in normalise.ts): the
 * compatibility forms NFKC folds to plain letters and the characters it
 * drops. A test holds the two to each other over every code point.
 */
export function isUndisguised(cp: number): boolean {
  if (cp < 0x2000) {
    if (cp < 0x100) return cp === 0xaa || cp === 0xad || cp === 0xb2 || cp === 0xb3 || cp === 0xb9 || cp === 0xba;
    return (
      cp === 0x17f || (cp >= 0x2b0 && cp <= 0x2b8) || cp === 0x34f || cp === 0x180e || (cp >= 0x1d2c && cp <= 0x1d6a)
    );
  }
  if (cp < 0x10000)
    return (
      (cp >= 0x200b && cp <= 0x200f) ||
      (cp >= 0x2060 && cp <= 0x2064) ||
      (cp >= 0x2070 && cp <= 0x209f) ||
      (cp >= 0x2100 && cp <= 0x214f) ||
      (cp >= 0x2460 && cp <= 0x24ff) ||
      (cp >= 0xfb00 && cp <= 0xfb06) ||
      cp === 0xfeff ||
      (cp >= 0xff01 && cp <= 0xff5e)
    );
  return (cp >= 0x1d400 && cp <= 0x1d7ff) || (cp >= 0x1f100 && cp <= 0x1f1ff);
}

/** The next notable character from `from`: read directly when it is the very next one, else by the native search. */
function nextNotable(text: string, from: number): { readonly index: number } | null {
  if (from < text.length) {
    const c = text.charCodeAt(from);
    if (!((c >= 0x20 && c <= 0x7e) || c === 0x09 || c === 0x0a || c === 0x0d)) return { index: from };
  }
  NOTABLE.lastIndex = from;
  return NOTABLE.exec(text);
}

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isAsciiAlnum(c: number): boolean {
  return isAsciiLetter(c) || (c >= 0x30 && c <= 0x39);
}

function classify(cp: number, previous: number, text: string, next: number): PoisonPattern | undefined {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return control(cp, text, next);
  if (cp < 0x180e) return undefined;
  if (cp === ZWNJ)
    return joinsLetters(previous, codePointAt(text, next)) ? undefined : PoisonPattern.UNICODE_ZERO_WIDTH;
  if (cp === ZWJ)
    return (isEmoji(previous) && isEmoji(codePointAt(text, next))) || joinsLetters(previous, codePointAt(text, next))
      ? undefined
      : PoisonPattern.UNICODE_ZERO_WIDTH;
  if (cp === 0x200b || cp === 0x180e || cp === 0xfeff || (cp >= 0x2060 && cp <= 0x2064))
    return PoisonPattern.UNICODE_ZERO_WIDTH;
  if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) return PoisonPattern.UNICODE_RTL_OVERRIDE;
  if (isVariationSelector(cp)) return hasBase(previous) ? undefined : PoisonPattern.UNICODE_VARIATION_SELECTOR;
  if (cp >= 0xe0000 && cp <= 0xe007f) return PoisonPattern.UNICODE_TAG_CHARACTERS;
  return undefined;
}

function control(cp: number, text: string, next: number): PoisonPattern | undefined {
  if (cp === 0x09 || cp === 0x0a || cp === 0x0d) return undefined;
  if (cp === 0x9b || cp === 0x9d) return PoisonPattern.ANSI_ESCAPE; // C1 CSI and OSC
  if (cp === 0x1b) {
    const following = text.charCodeAt(next);
    // ESC followed by a Fe byte (@ to _) opens a sequence: CSI "[", OSC "]", and the rest.
    if (following >= 0x40 && following <= 0x5f) return PoisonPattern.ANSI_ESCAPE;
  }
  return PoisonPattern.CONTROL_CHARACTER;
}

/**
 * The index after a valid emoji subdivision flag (black flag, 3-7 tag
 * letters or digits, cancel tag) starting at `from`, or 0 if there is none.
 */
function flagTagEnd(text: string, from: number): number {
  let i = from;
  let count = 0;
  while (count <= 7) {
    const cp = codePointAt(text, i);
    if (cp === CANCEL_TAG) return count >= 3 ? i + 2 : 0;
    const isTagAlnum = (cp >= 0xe0030 && cp <= 0xe0039) || (cp >= 0xe0061 && cp <= 0xe007a);
    if (!isTagAlnum) return 0;
    count++;
    i += 2;
  }
  return 0;
}

function codePointAt(text: string, index: number): number {
  return index < text.length ? (text.codePointAt(index) as number) : -1;
}

function isLatinLetter(cp: number): boolean {
  if (cp < 0x80) return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
  return cp >= 0xc0 && cp <= 0x24f && cp !== 0xd7 && cp !== 0xf7;
}

function isVariationSelector(cp: number): boolean {
  return (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
}

/** A variation selector belongs after a visible character, once. */
function hasBase(previous: number): boolean {
  if (previous <= 0x20 || previous === ZWJ || previous === ZWNJ) return false;
  if (previous >= 0xd800 && previous <= 0xdfff) return false;
  return !isVariationSelector(previous);
}

function isEmoji(cp: number): boolean {
  return (
    (cp >= 0x1f000 && cp <= 0x1faff) ||
    (cp >= 0x2600 && cp <= 0x27bf) ||
    (cp >= 0x2b00 && cp <= 0x2bff) ||
    cp === 0xfe0f ||
    cp === 0x2640 ||
    cp === 0x2642
  );
}

/** ZWNJ and ZWJ are spelling in Arabic-script, Syriac, Indic and Sinhala text: allowed between two letters of those scripts. */
function joinsLetters(previous: number, next: number): boolean {
  return isJoiningScript(previous) && isJoiningScript(next);
}

function isJoiningScript(cp: number): boolean {
  return (
    (cp >= 0x0600 && cp <= 0x08ff) || // Arabic, Syriac, Arabic supplement and extended
    (cp >= 0x0900 && cp <= 0x0dff) || // Indic scripts
    (cp >= 0xfb50 && cp <= 0xfdff) ||
    (cp >= 0xfe70 && cp <= 0xfefe)
  );
}
