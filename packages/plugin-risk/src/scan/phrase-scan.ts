import type { Address } from './addresses.js';
import { findAddresses } from './addresses.js';
import { scanDirectives } from './directives.js';
import type { Severity } from './patterns.js';
import { PoisonPattern } from './patterns.js';
import type { Words } from './words.js';
import { V, W, wordId } from './words.js';
import type { Pieces } from './normalise.js';

/** Receives a phrase-level finding; `target` names the other tool a cross-tool reference points at. */
export type PhraseReport = (pattern: PoisonPattern, index: number, target?: string, severity?: Severity) => void;

/**
 * A text as the signatures read it as written (its lower case is a string of its own): a string, or a
 * skeleton held as pieces (`Pieces` in normalise.ts), never joined.
 */
export interface TextView {
  readonly length: number;
  charCodeAt(index: number): number;
  indexOf(search: string, from?: number): number;
  slice(start: number, end: number): string;
}

/**
 * The lower case of a text as the signatures read it: a string, or the
 * lower-cased parts of a skeleton held as pieces, never joined (the same
 * characters at the same offsets as the joined lower case). The signatures
 * read it only through this class, so each of their reads sees one kind of
 * object, and inside it a string or pieces: a string read where pieces had
 * been read too is read more slowly by the engine.
 */
export class LowerText {
  readonly length: number;

  constructor(
    readonly text: string,
    readonly pieces?: Pieces,
  ) {
    this.length = pieces === undefined ? text.length : pieces.length;
  }

  charCodeAt(index: number): number {
    return this.pieces === undefined ? this.text.charCodeAt(index) : this.pieces.charCodeAt(index);
  }

  indexOf(search: string, from = 0): number {
    return this.pieces === undefined ? this.text.indexOf(search, from) : this.pieces.indexOf(search, from);
  }

  startsWith(search: string, position = 0): boolean {
    return this.pieces === undefined
      ? this.text.startsWith(search, position)
      : this.pieces.startsWith(search, position);
  }

  includes(search: string): boolean {
    return this.pieces === undefined ? this.text.includes(search) : this.pieces.includes(search);
  }

  slice(start: number, end: number): string {
    return this.pieces === undefined ? this.text.slice(start, end) : this.pieces.slice(start, end);
  }

  /** Whether `oneCharacter` (a pattern that matches one character) matches anywhere. */
  test(oneCharacter: RegExp): boolean {
    return this.pieces === undefined
      ? oneCharacter.test(this.text)
      : this.pieces.parts.some((part) => oneCharacter.test(part));
  }
}

/**
 * Which references to another exposed tool count. `concealed`: only with
 * concealment or exfiltration wording (high). `directed` (default): also an
 * imperative sending the model to a tool that sends, shares, deletes,
 * publishes, pays or runs (medium). `seed`: any imperative within 80
 * characters of another tool's name, as the seed wrote it (medium).
 */
export type CrossServerReferences = 'concealed' | 'directed' | 'seed';

export interface PhraseOptions {
  readonly crossServer: CrossServerReferences;
  /** The text is a property name: credentials named in it need no verb. */
  readonly isKey: boolean;
}

/** How far (in characters) an imperative may sit from the tool name it governs. */
/** The characters the role markers and the addresses start from. */
const MARKED = /[<[@:]/;
/** Every character `MARKED` and the directives' markers (`MARKERS` in directives.ts) look for. */
const ANY_MARK = /[<[@:{#|?]/;
const NO_ADDRESSES: readonly Address[] = Object.freeze([]);

const IMPERATIVE_REACH = 80;
/** How far an exfiltration verb may sit from the address it sends to. */
const EXFIL_REACH = 120;

/** Markers of a chat template's roles, each longer than three characters. */
const ROLE_MARKERS: Readonly<Record<'<' | '[', readonly string[]>> = {
  '<': [
    '<system>',
    '</system>',
    '<system ',
    '<|im_start|>',
    '<|im_end|>',
    '<|system|>',
    '<|user|>',
    '<|assistant|>',
    '<|endoftext|>',
    '<|start_header_id|>',
    '<<sys>>',
  ],
  '[': ['[system]', '[/system]', '[system message]', '[inst]', '[/inst]'],
};

/** A key for the two characters after an opening one. */
const pairKey = (second: number, third: number): number => second * 0x10000 + third;

/**
 * Each opening character's markers by the two characters after it: at an
 * opening, one lookup leaves the few markers that may stand there (a text of
 * `<|<` repeated tries none), instead of a comparison with each.
 */
const ROLE_MARKERS_AFTER = { '<': byPair(ROLE_MARKERS['<']), '[': byPair(ROLE_MARKERS['[']) };

function byPair(markers: readonly string[]): ReadonlyMap<number, readonly string[]> {
  const grouped = new Map<number, string[]>();
  for (const marker of markers) {
    const key = pairKey(marker.charCodeAt(1), marker.charCodeAt(2));
    grouped.set(key, [...(grouped.get(key) ?? []), marker]);
  }
  return grouped;
}

/**
 * Word-level signatures over a lower-cased text and its words (as
 * `tokenize` tags them). Every detector looks a bounded number of words or
 * characters ahead of an anchor, so the scan is linear in the text.
 * `otherTools` maps lower-cased names of the exposed tools to their names;
 * `own` (lower-cased) is the scanned tool's own name.
 */
export function scanPhrases(
  text: TextView,
  lower: LowerText,
  words: Words,
  otherTools: ReadonlyMap<string, string> | undefined,
  own: string | undefined,
  options: PhraseOptions,
  report: PhraseReport,
): void {
  // Role markers open with `<` or `[`, an address holds `@` or `://`: one native search for those characters
  // answers for the four searches they start from. Most strings of a schema hold none of them nor of the
  // directives' markers: one search for all answers for both then.
  const anyMark = lower.test(ANY_MARK);
  const markers = anyMark && lower.test(MARKED);
  if (markers) scanRoleMarkers(lower, report);
  const addresses = markers ? findAddresses(lower) : NO_ADDRESSES;
  if (addresses.length > 0) silenceWordsInside(words, addresses);
  if (words.union & (W.IGNORE | W.YOU | W.PRETEND | W.FROM)) scanOverrides(words, report);
  const concealed = (words.union & (W.NEGATION | W.NOT | W.DON | W.HIDE)) !== 0 && scanConcealment(words, report);
  const exfiltrates = (words.union & (W.EXFIL | W.EXFIL_STRONG)) !== 0 && scanExfiltration(words, addresses, report);
  scanDirectives(text, lower, words, addresses, options.isKey, anyMark, report);
  if (otherTools === undefined || otherTools.size === 0) return;
  const imperative = (words.union & W.IMPERATIVE) !== 0;
  const marked = concealed || exfiltrates || addresses.some((a) => a.email) || (words.union & W.SOFT) !== 0;
  // A reference to another tool is how honest gateways describe themselves too: only concealment or exfiltration makes it shadowing (high).
  if (imperative && marked) scanCrossToolReferences(lower, words, otherTools, own, 'high', report);
  if (options.crossServer === 'concealed') return;
  if (words.union2 & V.WHEN || lower.includes('instead of')) scanToolMentions(lower, words, otherTools, own, report);
  if (!imperative || marked) return;
  if (options.crossServer === 'seed') scanCrossToolReferences(lower, words, otherTools, own, 'medium', report);
  else scanDirectedReferences(lower, words, otherTools, own, report);
}

function scanRoleMarkers(lower: LowerText, report: PhraseReport): void {
  for (const open of ['<', '['] as const) {
    const after = ROLE_MARKERS_AFTER[open];
    for (let at = lower.indexOf(open); at !== -1; at = lower.indexOf(open, at + 1)) {
      // Past the text's end `charCodeAt` is NaN, which no key is.
      const markers = after.get(pairKey(lower.charCodeAt(at + 1), lower.charCodeAt(at + 2)));
      if (markers?.some((marker) => lower.startsWith(marker, at))) {
        report(PoisonPattern.SYSTEM_PROMPT_OVERRIDE, at);
        return;
      }
    }
  }
}

/**
 * Words inside an address are part of the address, not of the sentence.
 * Words start in order of the text, so the words that start before the next
 * address are passed over by a binary search, not one by one: none of them
 * starts inside it, nor moves the search past it (an address ends after it
 * starts).
 */
function silenceWordsInside(words: Words, addresses: readonly Address[]): void {
  const { count, starts, flags, flags2 } = words;
  let a = 0;
  let i = 0;
  while (i < count && a < addresses.length) {
    const address = addresses[a] as Address;
    const start = starts[i] as number;
    if (address.end <= start) a++;
    else if (address.start <= start) {
      flags[i] = flags2[i] = 0;
      i++;
    } else i = firstStartingAt(starts, i + 1, count, address.start);
  }
}

/** The first of the words `from` to `to` (in order of their start) that starts at `at` or after it; `to` if none. */
function firstStartingAt(starts: Int32Array, from: number, to: number, at: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((starts[middle] as number) < at) low = middle + 1;
    else high = middle;
  }
  return low;
}

function has(words: Words, index: number, group: number): boolean {
  return index < words.count && ((words.flags[index] as number) & group) !== 0;
}

/** "ignore ... previous ... instructions" and "you are now a ..." */
function scanOverrides(words: Words, report: PhraseReport): void {
  const { count, flags: groups } = words;
  for (let i = 0; i < count; i++) {
    const flags = groups[i] as number;
    // Each finding starts at one of these words (most words are none of them: "the", "a", "to" have groups too).
    if ((flags & (W.IGNORE | W.YOU | W.PRETEND | W.FROM)) === 0) continue;
    if (flags & W.IGNORE && overridesInstructions(words, i))
      report(PoisonPattern.HIDDEN_INSTRUCTION, words.starts[i] as number);
    if (reassignsRole(words, i)) report(PoisonPattern.ROLE_HIJACK, words.starts[i] as number);
  }
}

function overridesInstructions(words: Words, i: number): boolean {
  let qualified = false;
  for (let j = i + 1; j <= i + 5 && j < words.count; j++) {
    if (has(words, j, W.QUALIFIER)) qualified = true;
    else if (qualified && has(words, j, W.NOUN)) return true;
  }
  return false;
}

function reassignsRole(words: Words, i: number): boolean {
  if (has(words, i, W.YOU))
    return has(words, i + 1, W.ARE) && has(words, i + 2, W.ROLE_ADVERB) && has(words, i + 3, W.ARTICLE);
  if (has(words, i, W.PRETEND))
    return (
      (has(words, i + 1, W.TO) && has(words, i + 2, W.BE)) || (has(words, i + 1, W.YOU) && has(words, i + 2, W.ARE))
    );
  if (has(words, i, W.FROM))
    return has(words, i + 1, W.NOW) && has(words, i + 2, W.ON) && has(words, i + 3, W.YOU) && has(words, i + 4, W.ARE);
  return false;
}

/** "do not tell the user", "never mention this", "hide it from the user". */
function scanConcealment(words: Words, report: PhraseReport): boolean {
  let found = false;
  const { count, flags } = words;
  for (let i = 0; i < count; i++) {
    // Each finding starts at a negation or a verb of hiding.
    if (((flags[i] as number) & (W.NEGATION | W.NOT | W.DON | W.HIDE)) === 0) continue;
    if (concealsAt(words, i) || hidesFromUser(words, i)) {
      if (!found) report(PoisonPattern.CONCEALMENT_DIRECTIVE, words.starts[i] as number);
      found = true;
    }
  }
  return found;
}

function concealsAt(words: Words, i: number): boolean {
  const end = negationEnd(words, i);
  if (end === -1) return false;
  for (let j = end + 1; j <= end + 3 && j < words.count; j++) {
    const verb = words.flags[j] as number;
    if ((verb & (W.DISCLOSE | W.CONCEAL)) === 0) continue;
    const audience = verb & W.CONCEAL ? W.AUDIENCE | W.OBJECT : W.AUDIENCE;
    for (let k = j + 1; k <= j + 4; k++) if (has(words, k, audience)) return true;
    return false;
  }
  return false;
}

/** The index of the last word of an imperative negation starting at `i`, or -1. */
function negationEnd(words: Words, i: number): number {
  if (has(words, i, W.NEGATION)) return i;
  if (has(words, i, W.NOT) && i > 0 && has(words, i - 1, W.MODAL)) return i;
  if (has(words, i, W.DON) && has(words, i + 1, W.T)) return i + 1;
  return -1;
}

function hidesFromUser(words: Words, i: number): boolean {
  if (!has(words, i, W.HIDE)) return false;
  for (let j = i + 1; j <= i + 6; j++) {
    if (!has(words, j, W.FROM)) continue;
    for (let k = j + 1; k <= j + 3; k++) if (has(words, k, W.AUDIENCE)) return true;
  }
  return false;
}

/** "send / post / forward ... all / contents / credentials ... to <address>". */
export function scanExfiltration(words: Words, addresses: readonly Address[], report: PhraseReport): boolean {
  if (addresses.length === 0) return false;
  const { count, flags: wordFlags, starts, ends } = words;
  let after = 0; // first address starting at or after the current word
  let before = -1; // last address ending at or before the current word
  let wordAtAddress = 0;
  // The first data word after the current one, looked for no further than `wordAtAddress`. The two address
  // cursors and this one only move forward with the word, so they are moved only at the words that can report:
  // most words carry neither exfiltration flag and cost one bit test.
  let data = 0;
  for (let i = 0; i < count; i++) {
    const flags = wordFlags[i] as number;
    if ((flags & (W.EXFIL | W.EXFIL_STRONG)) === 0) continue;
    const start = starts[i] as number;
    const end = ends[i] as number;
    while (before + 1 < addresses.length && (addresses[before + 1] as Address).end <= start) before++;
    while (after < addresses.length && (addresses[after] as Address).start < end) after++;
    const next = addresses[after];
    const nearNext = next !== undefined && next.start - end <= EXFIL_REACH;
    if (flags & W.EXFIL_STRONG) {
      const previous = addresses[before];
      if (nearNext || (previous !== undefined && start - previous.end <= EXFIL_REACH)) {
        report(PoisonPattern.EXFILTRATION_DIRECTIVE, start);
        return true;
      }
      continue;
    }
    if (!nearNext) continue;
    while (wordAtAddress < count && (starts[wordAtAddress] as number) < next.start) wordAtAddress++;
    // A data word between this one and the address's first word.
    if (data <= i) data = i + 1;
    while (data < wordAtAddress && ((wordFlags[data] as number) & W.DATA) === 0) data++;
    if (data < wordAtAddress) {
      report(PoisonPattern.EXFILTRATION_DIRECTIVE, start);
      return true;
    }
  }
  return false;
}

/** An imperative within reach (80 characters) of another exposed tool's name: the seed's rule. */
function scanCrossToolReferences(
  lower: LowerText,
  words: Words,
  otherTools: ReadonlyMap<string, string>,
  own: string | undefined,
  level: Severity,
  report: PhraseReport,
): void {
  const imperatives: number[] = [];
  for (let i = 0; i < words.count; i++) if ((words.flags[i] as number) & W.IMPERATIVE) imperatives.push(i);
  if (imperatives.length === 0) return;
  let before = 0; // imperatives[before - 1] is the last one ending before the name
  let after = 0; // imperatives[after] is the first one starting after the name
  for (let s = 0; s < lower.length;) {
    if (!isNameChar(lower.charCodeAt(s))) {
      s++;
      continue;
    }
    let e = s;
    while (e < lower.length && isNameChar(lower.charCodeAt(e))) e++;
    const next = e;
    while (e > s && !isAlnum(lower.charCodeAt(e - 1))) e--;
    while (before < imperatives.length && (words.ends[imperatives[before] as number] as number) <= s) before++;
    after = Math.max(after, before);
    while (after < imperatives.length && (words.starts[imperatives[after] as number] as number) < e) after++;
    const lastBefore = before > 0 ? (words.ends[imperatives[before - 1] as number] as number) : -Infinity;
    const firstAfter = after < imperatives.length ? (words.starts[imperatives[after] as number] as number) : Infinity;
    if (e > s && (s - lastBefore <= IMPERATIVE_REACH || firstAfter - e <= IMPERATIVE_REACH)) {
      const key = lower.slice(s, e);
      const target = key === own ? undefined : otherTools.get(key);
      if (target !== undefined) report(PoisonPattern.CROSS_SERVER_IMPERATIVE, s, target, level);
    }
    s = next;
  }
}

function isAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

function isNameChar(c: number): boolean {
  return isAlnum(c) || c === 95 || c === 45 || c === 46; // _ - .
}

/** Words of a tool name that act on the world: "send_email", "delete_file", "git_push", "transfer_funds". */
const ACTING = new Set([
  'send',
  'merge',
  'post',
  'share',
  'delete',
  'remove',
  'push',
  'publish',
  'transfer',
  'pay',
  'upload',
  'forward',
  'email',
  'sms',
  'create',
  'execute',
  'exec',
  'run',
  'move',
  'write',
]);

/**
 * The default reading of a reference: an imperative opening a clause
 * ("Then call", "Always invoke", ", run"), followed within three words by
 * another exposed tool whose name acts on the world (medium). Only the names
 * right after imperatives are looked up.
 */
function scanDirectedReferences(
  lower: LowerText,
  words: Words,
  otherTools: ReadonlyMap<string, string>,
  own: string | undefined,
  report: PhraseReport,
): void {
  for (let i = 0; i < words.count; i++) {
    if (((words.flags[i] as number) & W.IMPERATIVE) === 0 || !opensClause(lower, words, i)) continue;
    for (let j = i + 1; j <= i + 3 && j < words.count; j++) {
      const start = words.starts[j] as number;
      const target = targetAt(lower, start, otherTools, own);
      if (target === undefined) continue;
      let end = nameEnd(lower, start);
      while (end > start && !isAlnum(lower.charCodeAt(end - 1))) end--;
      if (
        lower
          .slice(start, end)
          .split(/[_.-]/)
          .some((part) => ACTING.has(part))
      )
        report(PoisonPattern.CROSS_SERVER_IMPERATIVE, start, target, 'medium');
      break;
    }
  }
}

const CLAUSE_WORDS = ['then', 'afterwards', 'also', 'next', 'and', 'always', 'finally', 'now'].map(wordId);

function opensClause(lower: LowerText, words: Words, i: number): boolean {
  if (i === 0) return true;
  const start = words.starts[i] as number;
  const previousEnd = words.ends[i - 1] as number;
  for (let k = previousEnd; k < start; k++) {
    const c = lower.charCodeAt(k);
    if (c === 46 || c === 44 || c === 59 || c === 58 || c === 10 || c === 33) return true; // . , ; : newline !
  }
  return CLAUSE_WORDS.includes(words.nodes[i - 1] as number);
}

const RUN_PASSIVE = ['called', 'used', 'invoked', 'run', 'runs', 'executed'];

/**
 * Another tool named as the object of an order about it: "instead of
 * <tool>" (coercive ordering: high when it also says every, always, never
 * or do not), and "when <tool> is called, ..." (an order rewriting what
 * another tool does: a medium cross-server reference). Only the name right
 * after each anchor is looked up.
 */
function scanToolMentions(
  lower: LowerText,
  words: Words,
  otherTools: ReadonlyMap<string, string>,
  own: string | undefined,
  report: PhraseReport,
): void {
  for (let at = lower.indexOf('instead of '); at !== -1; at = lower.indexOf('instead of ', at + 11)) {
    if (targetAt(lower, at + 11, otherTools, own) === undefined) continue;
    const insists = (words.union2 & (V.QUANT | V.NEG)) !== 0;
    report(PoisonPattern.COERCIVE_ORDERING, at + 11, undefined, insists ? 'high' : 'medium');
    break;
  }
  if ((words.union2 & V.WHEN) === 0) return;
  for (let i = 0; i < words.count; i++) {
    if (((words.flags2[i] as number) & V.WHEN) === 0) continue;
    for (let j = i + 1; j <= i + 2 && j < words.count; j++) {
      const start = words.starts[j] as number;
      const target = targetAt(lower, start, otherTools, own);
      if (target !== undefined && whenCalled(lower, words, j, nameEnd(lower, start)))
        report(PoisonPattern.CROSS_SERVER_IMPERATIVE, start, target, 'medium');
    }
  }
}

/** The exposed tool whose name starts at `start` (a whole name token), if any. */
function targetAt(
  lower: LowerText,
  start: number,
  otherTools: ReadonlyMap<string, string>,
  own: string | undefined,
): string | undefined {
  if (start > 0 && isNameChar(lower.charCodeAt(start - 1))) return undefined;
  let end = nameEnd(lower, start);
  while (end > start && !isAlnum(lower.charCodeAt(end - 1))) end--;
  if (end - start < 3 || end - start > 128) return undefined;
  const key = lower.slice(start, end);
  return key === own ? undefined : otherTools.get(key);
}

function nameEnd(lower: LowerText, start: number): number {
  let end = start;
  while (end < lower.length && end - start <= 128 && isNameChar(lower.charCodeAt(end))) end++;
  return end;
}

/** "when/whenever/every time <name> is called/used/runs": `first` is the name's first word. */
function whenCalled(lower: LowerText, words: Words, first: number, end: number): boolean {
  const opens =
    ((words.flags2[first - 1] as number) & V.WHEN) !== 0 || ((words.flags2[first - 2] as number) & V.WHEN) !== 0;
  if (!opens || first < 1) return false;
  let after = first;
  while (after < words.count && (words.starts[after] as number) < end) after++;
  const word = (i: number) => (i < words.count ? lower.slice(words.starts[i] as number, words.ends[i] as number) : '');
  if (RUN_PASSIVE.includes(word(after))) return true;
  return ['is', 'are', 'gets', 'get'].includes(word(after)) && RUN_PASSIVE.includes(word(after + 1));
}
