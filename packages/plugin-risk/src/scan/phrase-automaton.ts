/**
 * A fixed dictionary of phrases, matched in one pass over a text
 * (Aho-Corasick): the automaton is built once from the lexicon, never from
 * the input, and reads each character once, so matching is linear in the
 * text whatever it holds. ASCII steps through a dense table, one column per
 * ASCII character some phrase uses (every other ASCII character leads back
 * to the root, so they share one column of zeros): the table stays small
 * enough to sit in the processor's cache. Other characters step through
 * flat tables too: the root's step for each code unit, and for each node the
 * few code units whose step differs from the root's (a node's own children
 * beyond ASCII and those of the nodes on its failure chain), sorted, so a
 * step is a load and a short binary search, never a walk of the failure
 * links. A table entry is the next node's row offset, negated (bitwise) when
 * that node ends a phrase, so a step costs one load and no multiplication.
 * The pass reads the text's code units from a typed array it copies them
 * to (natively, a copy of memory): an element load there costs the engine
 * less than `charCodeAt`, which checks at each character how the string is
 * stored.
 */

import { Buffer } from 'node:buffer';
import { endianness } from 'node:os';
import type { WordBuffers } from './word-table.js';
import { LETTERS, keepWords, wordBuffers, wordTable } from './word-table.js';

/** How a phrase meets the text around it. */
export type Boundary = 'word' | 'prefix' | 'none';

export interface Phrase {
  readonly text: string;
  readonly boundary: Boundary;
  /** What the phrase stands for: an index into the caller's concepts. */
  readonly concept: number;
}

const ASCII = 128;
/**
 * The word trie's width, as a constant of this module: the loops read an
 * imported binding anew at each use (a load and a check that it is set),
 * a constant of their own module is folded into their code.
 */
const WIDTH = LETTERS;
const BOUNDARY = Object.freeze({ none: 0, prefix: 1, word: 2 });

export class PhraseAutomaton {
  private readonly columns: number;
  /**
   * The pass (`unitPass`): a closure over this
   * automaton's tables (`PassTables`), so that the engine, which compiles a
   * function made once for its one context, reads each table as a constant
   * (no check of what the value is, nor loads of where its elements lie, at
   * each character).
   */
  private readonly mark: (units: Uint16Array, length: number) => number;
  /** The phrases ending at each node, its failure chain's included: `outputs[from[node]]` to `outputs[from[node + 1]]`. */
  private readonly outputs: Int32Array;
  private readonly from: Int32Array;
  /** Each phrase's length and boundary (`BOUNDARY`), read where it may end. */
  readonly lengths: Int32Array;
  private readonly boundaries: Uint8Array;
  /** The phrases the last pass found, in pairs: the phrase's index in `phrases`, and where it ends. */
  hits: Int32Array = new Int32Array(256);

  constructor(readonly phrases: readonly Phrase[]) {
    let children: Array<Map<number, number>> = [new Map<number, number>()];
    let ends: number[][] = [[]];
    phrases.forEach((phrase, index) => {
      let node = 0;
      for (let i = 0; i < phrase.text.length; i++) {
        const c = phrase.text.charCodeAt(i);
        let next = (children[node] as Map<number, number>).get(c);
        if (next === undefined) {
          next = children.length;
          children.push(new Map<number, number>());
          ends.push([]);
          (children[node] as Map<number, number>).set(c, next);
        }
        node = next;
      }
      (ends[node] as number[]).push(index);
    });
    // Nodes numbered breadth-first: the shallow nodes, where ordinary text keeps the automaton, share a few rows of the table.
    const order = [0];
    for (let head = 0; head < order.length; head++)
      order.push(...(children[order[head] as number] as Map<number, number>).values());
    const renumber = new Int32Array(order.length);
    order.forEach((old, k) => (renumber[old] = k));
    children = order.map(
      (old) => new Map([...(children[old] as Map<number, number>)].map(([c, child]) => [c, renumber[child] as number])),
    );
    ends = order.map((old) => ends[old] as number[]);
    const count = children.length;
    const fail = new Int32Array(count);
    const column = new Uint8Array(ASCII);
    let columns = 1;
    for (const phrase of phrases)
      for (let i = 0; i < phrase.text.length; i++) {
        const c = phrase.text.charCodeAt(i);
        if (c < ASCII && column[c] === 0) column[c] = columns++;
      }
    const ascii = count < 0x10000 ? new Uint16Array(count * columns) : new Int32Array(count * columns);
    const outputs: number[][] = ends.map((list) => [...list]);
    // Breadth-first: a node's failure link and table row are known before its children's.
    const queue: number[] = [];
    for (const [c, child] of children[0] as Map<number, number>) {
      queue.push(child);
      if (c < ASCII) ascii[column[c] as number] = child;
    }
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head] as number;
      const failRow = (fail[node] as number) * columns;
      for (let k = 1; k < columns; k++) ascii[node * columns + k] = ascii[failRow + k] as number;
      for (const [c, child] of children[node] as Map<number, number>) {
        let f = fail[node] as number;
        while (f !== 0 && !(children[f] as Map<number, number>).has(c)) f = fail[f] as number;
        const target = (children[f] as Map<number, number>).get(c);
        fail[child] = target !== undefined && target !== child ? target : 0;
        (outputs[child] as number[]).push(...(outputs[fail[child]] as number[]));
        if (c < ASCII) ascii[node * columns + (column[c] as number)] = child;
        queue.push(child);
      }
    }
    const steps = new Int32Array(count * columns);
    for (let k = 0; k < steps.length; k++) {
      const next = ascii[k] as number;
      steps[k] = (outputs[next] as number[]).length > 0 ? ~(next * columns) : next * columns;
    }
    this.columns = columns;
    const beyond = stepsBeyondAscii(children, fail);
    const emits = Uint8Array.from(outputs, (list) => (list.length > 0 ? 1 : 0));
    const tables: PassTables = { steps, column, columns, emits, rootBeyond: beyond.root, beyond };
    this.mark = unitPass(tables);
    this.from = new Int32Array(count + 1);
    outputs.forEach((list, node) => (this.from[node + 1] = (this.from[node] as number) + list.length));
    this.outputs = Int32Array.from(outputs.flat());
    this.lengths = Int32Array.from(phrases, (phrase) => phrase.text.length);
    this.boundaries = Uint8Array.from(phrases, (phrase) => BOUNDARY[phrase.boundary]);
  }

  /**
   * Calls `found` with each phrase that occurs in `text` with its boundaries
   * met, in order of its end, and tags the text's ASCII words (`find`).
   */
  scan(text: string, found: (phrase: Phrase, start: number, end: number) => void): void {
    this.report(this.find(text), found);
  }

  /** `scan` of a text held as parts (`findParts`). */
  scanParts(text: PartedText, found: (phrase: Phrase, start: number, end: number) => void): void {
    this.report(this.findParts(text), found);
  }

  /** Calls `found` with each of the `count` phrases the last pass found. */
  private report(count: number, found: (phrase: Phrase, start: number, end: number) => void): void {
    const { hits, lengths, phrases } = this;
    for (let k = 0; k < count; k++) {
      const index = hits[2 * k] as number;
      const end = hits[2 * k + 1] as number;
      found(phrases[index] as Phrase, end - (lengths[index] as number), end);
    }
    this.release();
  }

  /**
   * Lets go of `hits` once read, when a huge text grew it past
   * `KEPT_ENTRIES`: one such text does not keep its memory for good.
   */
  release(): void {
    if (this.hits.length > KEPT_ENTRIES) this.hits = new Int32Array(256);
  }

  /**
   * Finds each phrase that occurs in `text` with its boundaries met, in
   * order of its end: returns how many, written to `hits` (its index in
   * `phrases`, then where it ends; valid until the next pass). The same loop
   * tags the text's ASCII words as `tokenize` does (read them with
   * `taggedWords()` before the next pass): the phrase table and the word trie
   * are each a chain of dependent loads, and two chains in one loop overlap
   * where two loops would pay for both. The loop only marks where the
   * automaton reached a node with phrases; which of them end there with their
   * boundaries met is read afterwards (`phraseEnds`), and the caller reads
   * them from `hits`: the loop holds fewer values (fewer of them kept in
   * memory rather than registers at each character), and no function is
   * called per phrase.
   */
  find(text: string): number {
    return this.findUnits(unitsOf(text), text.length);
  }

  /**
   * `find` of a text held as parts (its `parts` one after another, never
   * joined): they are copied one after another to the pass's units, and
   * offsets are the whole text's.
   */
  findParts(text: PartedText): number {
    return this.findUnits(unitsOfParts(text.parts, text.length), text.length);
  }

  private findUnits(units: Uint16Array, length: number): number {
    const buffers = wordBuffers(length);
    usePassBuffers(buffers);
    const marked = this.mark(units, length);
    keepTagged(buffers);
    const count = this.phraseEnds(units, markBuffer, marked);
    releaseMarks();
    releaseUnits();
    return count;
  }

  /**
   * The phrases of each marked node whose boundaries the text (its code
   * units in `units`, a 0 after them) meets, written to `hits`: how many.
   */
  private phraseEnds(units: Uint16Array, marks: Int32Array, marked: number): number {
    const { columns, outputs, from, lengths, boundaries } = this;
    let hits = this.hits;
    let count = 0;
    for (let m = 0; m < marked; m += 2) {
      const node = ((marks[m] as number) / columns) | 0;
      const end = marks[m + 1] as number;
      for (let k = from[node] as number, last = from[node + 1] as number; k < last; k++) {
        const index = outputs[k] as number;
        const boundary = boundaries[index] as number;
        if (boundary !== BOUNDARY.none) {
          const before = end - (lengths[index] as number) - 1;
          if (before >= 0 && isWordChar(units[before] as number)) continue;
        }
        // At the text's end, `units[end]` is the 0 after it: no word character.
        if (boundary === BOUNDARY.word && isWordChar(units[end] as number)) continue;
        if (2 * count === hits.length) hits = this.hits = grow(hits);
        hits[2 * count] = index;
        hits[2 * count + 1] = end;
        count++;
      }
    }
    return count;
  }
}

/** The tables a pass reads, fixed when the automaton is built. */
interface PassTables {
  /** Per node, `columns` wide: the next node's row offset, or its bitwise complement when it has outputs. */
  readonly steps: Int32Array;
  /** The column of each ASCII character: 0 for one no phrase uses. */
  readonly column: Uint8Array;
  readonly columns: number;
  /** 1 where a node has outputs: the pass reads one byte. */
  readonly emits: Uint8Array;
  /**
   * Per code unit beyond ASCII, the node the root steps to on it (0 when the root has no child there), or -1 for a
   * unit no phrase holds, which leads back to the root from every node (64 K entries, built with the automaton).
   */
  readonly rootBeyond: Int32Array;
  readonly beyond: Beyond;
}

/**
 * The steps beyond ASCII that differ from the root's: node `n`'s are `units[from[n], from[n + 1])`, sorted, each
 * leading to `next` at the same index.
 */
interface Beyond {
  readonly from: Int32Array;
  readonly units: Uint16Array;
  readonly next: Int32Array;
}

/**
 * The pass over a text's `length` code units in `units` (a 0 after them):
 * writes its words to the word buffers (`passStarts` and the others; their
 * count and the unions of their groups to `wordCount`, `wordUnion`,
 * `wordUnion2`), and marks where the automaton reached a node with phrases
 * (`markBuffer`): returns the marks' length. Around its loop it runs only
 * reads and stores of variables and the return: nothing whose compiled form
 * depends on what the engine saw it do. Code before the loop runs once on
 * the first pass, before the engine records anything; code after it has not
 * run yet when the engine compiles the loop, mid-pass. Compiled without that
 * record, either leaves the compiled code at every later pass (see
 * `passStarts`).
 */
function unitPass(tables: PassTables): (units: Uint16Array, length: number) => number {
  const { steps, column, columns, emits, rootBeyond } = tables;
  const { from: beyondFrom, units: beyondUnits, next: beyondNext } = tables.beyond;
  const { next: wordNext, dead, flags: wordFlags, flags2: wordFlags2 } = wordTable();
  return function markUnits(units: Uint16Array, length: number): number {
    const starts = passStarts;
    const ends = passEnds;
    const flags = passFlags;
    const flags2 = passFlags2;
    const nodes = passNodes;
    let union = 0;
    let union2 = 0;
    let marks = markBuffer;
    let marked = 0; // marks written: pairs of a row offset and the end of the character that reached it
    let count = 0;
    let wordStart = -1; // where the word being read starts, -1 between words
    let word = 0; // its trie node, `dead` once it left the trie
    let row = 0; // the current phrase node's row offset
    // One step past the end, onto the 0 there: it closes the last word, and leads the automaton to the root, which
    // ends no phrase, so it marks nothing.
    for (let i = 0; i <= length; i++) {
      const c = units[i] as number;
      const letter = c - 97;
      if (letter >= 0 && letter < WIDTH) {
        if (wordStart < 0) {
          wordStart = i;
          word = 0;
        }
        word = wordNext[word * WIDTH + letter] as number;
      } else if (wordStart >= 0) {
        const groups = wordFlags[word] as number;
        const groups2 = wordFlags2[word] as number;
        starts[count] = wordStart;
        ends[count] = i;
        flags[count] = groups;
        flags2[count] = groups2;
        nodes[count] = word === dead ? 0 : word;
        union |= groups;
        union2 |= groups2;
        count++;
        wordStart = -1;
      }
      if (c < ASCII) {
        const step = steps[row + (column[c] as number)] as number;
        if (step >= 0) {
          row = step;
          continue;
        }
        row = ~step;
      } else {
        const root = rootBeyond[c] as number;
        const node = root >= 0 ? stepBeyond(beyondFrom, beyondUnits, beyondNext, row / columns, c, root) : 0;
        row = node * columns;
        if (emits[node] === 0) continue;
      }
      if (i === length) break;
      if (marked === marks.length) marks = markBuffer = grow(marks);
      marks[marked] = row;
      marks[marked + 1] = i + 1;
      marked += 2;
    }
    wordCount = count;
    wordUnion = union;
    wordUnion2 = union2;
    return marked;
  };
}

/**
 * The node the automaton steps to from `node` on a code unit `c` beyond
 * ASCII that some phrase holds: the root's step on it (`root`), unless the
 * node (or a node on its failure chain) has a child on this unit.
 */
function stepBeyond(
  from: Int32Array,
  units: Uint16Array,
  next: Int32Array,
  node: number,
  c: number,
  root: number,
): number {
  let low = from[node] as number;
  let high = from[node + 1] as number;
  while (low < high) {
    const middle = (low + high) >> 1;
    const unit = units[middle] as number;
    if (unit === c) return next[middle] as number;
    if (unit < c) low = middle + 1;
    else high = middle;
  }
  return root;
}

/**
 * The word buffers of the pass about to run (`usePassBuffers`). A pass reads
 * them, and its text's length, from here and from its arguments, so that
 * nothing it runs before its loop is an operation whose compiled form
 * depends on what the engine saw it do: the first pass over a long text runs
 * that code once, before the engine starts recording, then compiles the
 * function while the loop runs; compiled without that record, the function
 * left its compiled code at the next pass and, each pass being one long loop,
 * stayed in the slower code compiled for the loop alone (about 20 % slower
 * in some processes and not in others).
 */
let passStarts: Int32Array = new Int32Array(0);
let passEnds: Int32Array = new Int32Array(0);
let passFlags: Int32Array = new Int32Array(0);
let passFlags2: Int32Array = new Int32Array(0);
let passNodes: Int32Array = new Int32Array(0);

function usePassBuffers(buffers: WordBuffers): void {
  passStarts = buffers.starts;
  passEnds = buffers.ends;
  passFlags = buffers.flags;
  passFlags2 = buffers.flags2;
  passNodes = buffers.nodes;
}

/** Where the last pass marked nodes with phrases, reused between passes (scanning is synchronous). */
let markBuffer: Int32Array = new Int32Array(1024);

/** Entries a pass buffer keeps between scans (1 MiB); one that a huge text grew past it is let go once read. */
const KEPT_ENTRIES = 1 << 18;

/** Lets go of the marks once read, when a huge text grew them past `KEPT_ENTRIES`. */
function releaseMarks(): void {
  if (markBuffer.length > KEPT_ENTRIES) markBuffer = new Int32Array(1024);
}
/**
 * The code units the pass reads, reused between passes: the text is copied
 * to them as UTF-16 (a copy of memory for a string stored that way), with a
 * 0 after it. A big-endian machine fills them one unit at a time instead.
 */
let units = new Uint16Array(1024);
let unitBytes = Buffer.from(units.buffer);
/** Whether a `Uint16Array` holds its units as `Buffer`'s `utf16le` reads and writes them. */
export const LITTLE_ENDIAN = endianness() === 'LE';

/** Units kept between scans (4 MiB); more that a huge text needed are let go once read. */
const KEPT_UNITS = 1 << 21;

/** `units` with room for `length` code units and the 0 after them. */
function reserveUnits(length: number): Uint16Array {
  if (units.length <= length) {
    units = new Uint16Array(Math.max(length + 1, units.length * 2));
    unitBytes = Buffer.from(units.buffer);
  }
  units[length] = 0;
  return units;
}

/**
 * Copies `text` to `units` from `at`: natively, unless the text is short
 * enough that the call into the runtime costs more than a loop.
 */
function writeUnits(text: string, at: number): void {
  const length = text.length;
  if (LITTLE_ENDIAN && length > NATIVE_COPY) unitBytes.write(text, 2 * at, 'utf16le');
  else for (let i = 0; i < length; i++) units[at + i] = text.charCodeAt(i);
}

/** The length past which a native copy is cheaper than a loop. */
const NATIVE_COPY = 1024;

function unitsOf(text: string): Uint16Array {
  const buffer = reserveUnits(text.length);
  writeUnits(text, 0);
  return buffer;
}

function unitsOfParts(parts: readonly string[], length: number): Uint16Array {
  const buffer = reserveUnits(length);
  let at = 0;
  for (const part of parts) {
    writeUnits(part, at);
    at += part.length;
  }
  return buffer;
}

function releaseUnits(): void {
  if (units.length > KEPT_UNITS) {
    units = new Uint16Array(1024);
    unitBytes = Buffer.from(units.buffer);
  }
}

/** How many words the last pass read, and the unions of their groups. */
let wordCount = 0;
let wordUnion = 0;
let wordUnion2 = 0;

/** A buffer twice as long, holding what `buffer` held. */
function grow(buffer: Int32Array): Int32Array {
  const bigger = new Int32Array(buffer.length * 2);
  bigger.set(buffer);
  return bigger;
}

/** Keeps the words the last pass read: `wordCount` of them in `buffers`. */
function keepTagged(buffers: WordBuffers): void {
  const { starts, ends, flags, flags2, nodes } = buffers;
  keepWords({ count: wordCount, union: wordUnion, starts, ends, flags, flags2, union2: wordUnion2, nodes });
}

/** A text held as parts, read one after another (`Pieces` in normalise.ts). */
export interface PartedText {
  readonly parts: readonly string[];
  readonly length: number;
}

/**
 * The automaton's steps on code units beyond ASCII (it steps by UTF-16 code unit), as flat tables: the root's step
 * for each unit, and per node the units whose step differs from the root's. That set is the node's own children
 * beyond ASCII and its failure node's set (a child of a node other than the root lies deeper than any child of the
 * root, so it never equals the root's step): nodes numbered breadth-first have their failure node's set made first.
 */
function stepsBeyondAscii(
  children: ReadonlyArray<ReadonlyMap<number, number>>,
  fail: Int32Array,
): { root: Int32Array; from: Int32Array; units: Uint16Array; next: Int32Array } {
  const root = new Int32Array(0x10000).fill(-1);
  for (const map of children) for (const c of map.keys()) if (c >= ASCII) root[c] = 0;
  for (const [c, child] of children[0] as ReadonlyMap<number, number>) if (c >= ASCII) root[c] = child;
  const sets: Array<ReadonlyMap<number, number>> = [new Map()];
  const from = new Int32Array(children.length + 1);
  for (let node = 1; node < children.length; node++) {
    // A node without children beyond ASCII shares its failure node's set (most nodes: that of the root, empty).
    let set = sets[fail[node] as number] as ReadonlyMap<number, number>;
    for (const [c, child] of children[node] as ReadonlyMap<number, number>)
      if (c >= ASCII) {
        if (set === sets[fail[node] as number]) set = new Map(set);
        (set as Map<number, number>).set(c, child);
      }
    sets.push(set);
    from[node + 1] = (from[node] as number) + set.size;
  }
  const units = new Uint16Array(from[children.length] as number);
  const next = new Int32Array(units.length);
  sets.forEach((set, node) => {
    let k = from[node] as number;
    for (const c of [...set.keys()].sort((a, b) => a - b)) {
      units[k] = c;
      next[k++] = set.get(c) as number;
    }
  });
  return { root, from, units, next };
}

/** Letters and digits of the alphabetic scripts (Latin, Greek, Cyrillic); not CJK, which is written without spaces. */
export function isWordChar(c: number): boolean {
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);
  return (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7) || (c >= 0x370 && c <= 0x52f);
}
