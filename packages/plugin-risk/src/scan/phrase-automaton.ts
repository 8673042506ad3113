/**
 * A fixed dictionary of phrases, matched in one pass over a text
 * (Aho-Corasick): the automaton is built once from the lexicon, never from
 * the input, and reads each character once, so matching is linear in the
 * text whatever it holds. ASCII steps through a dense table, one column per
 * ASCII character some phrase uses (every other ASCII character leads back
 * to the root, so they share one column of zeros): the table stays small
 * enough to sit in the processor's cache. Other characters step through the
 * node's map and failure links. A table entry is the next node's row offset,
 * negated (bitwise) when that node ends a phrase, so a step costs one load
 * and no multiplication.
 */

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
const BOUNDARY = Object.freeze({ none: 0, prefix: 1, word: 2 });

/** Texts this long or longer are read as two halves in one loop (`scanTwo`); tests lower it. */
const TWO_STREAMS_FROM = 16_384;
export const TWO_STREAMS = { from: TWO_STREAMS_FROM };

interface SecondHalf {
  starts: Int32Array;
  ends: Int32Array;
  flags: Int32Array;
  flags2: Int32Array;
  nodes: Int32Array;
  /** The second half's phrase ends, held back: phrase index and start, in pairs. */
  phrases: Int32Array;
}

let second: SecondHalf | undefined;

/** The second half's buffers, reused between scans. */
function secondBuffers(length: number): SecondHalf {
  const size = (length >> 1) + 2;
  if (second === undefined || second.starts.length < size) {
    const n = Math.max(size, (second?.starts.length ?? 0) * 2);
    second = {
      starts: new Int32Array(n),
      ends: new Int32Array(n),
      flags: new Int32Array(n),
      flags2: new Int32Array(n),
      nodes: new Int32Array(n),
      phrases: second?.phrases ?? new Int32Array(1024),
    };
  }
  return second;
}

function grow(array: Int32Array): Int32Array {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

function isLetter(c: number): boolean {
  return c - 97 >= 0 && c - 97 < LETTERS;
}

export class PhraseAutomaton {
  /** The longest phrase's length: the second half's state is warmed over this many characters. */
  private readonly depth: number;
  /** Per node, `columns` wide: the next node's row offset, or its bitwise complement when it has outputs. */
  private readonly steps: Int32Array;
  /** The column of each ASCII character: 0 for one no phrase uses. */
  private readonly column: Uint8Array;
  private readonly columns: number;
  private readonly children: Array<Map<number, number>>;
  private readonly fail: Int32Array;
  /** The phrases ending at each node, its failure chain's included: `outputs[from[node]]` to `outputs[from[node + 1]]`. */
  private readonly outputs: Int32Array;
  private readonly from: Int32Array;
  /** 1 where a node has outputs: the hot loop reads one byte. */
  private readonly emits: Uint8Array;
  /** Each phrase's length and boundary (`BOUNDARY`), read where it may end. */
  private readonly lengths: Int32Array;
  private readonly boundaries: Uint8Array;
  /**
   * 1 for each code unit beyond ASCII some phrase uses (any other leads back to the root from every node): one
   * byte read per such character in the hot loop, where a set's lookup cost more (64 KB, built with the automaton).
   */
  private readonly used: Uint8Array;

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
    this.steps = steps;
    this.column = column;
    this.columns = columns;
    this.children = children;
    this.fail = fail;
    this.from = new Int32Array(count + 1);
    outputs.forEach((list, node) => (this.from[node + 1] = (this.from[node] as number) + list.length));
    this.outputs = Int32Array.from(outputs.flat());
    this.emits = Uint8Array.from(outputs, (list) => (list.length > 0 ? 1 : 0));
    this.lengths = Int32Array.from(phrases, (phrase) => phrase.text.length);
    this.boundaries = Uint8Array.from(phrases, (phrase) => BOUNDARY[phrase.boundary]);
    this.used = unitsBeyondAscii(phrases);
    this.depth = phrases.reduce((deepest, phrase) => Math.max(deepest, phrase.text.length), 0);
  }

  /**
   * Calls `found` with each phrase that occurs in `text` with its boundaries
   * met, in order of its end. The same loop tags the text's ASCII words as
   * `tokenize` does (read them with `taggedWords()` before the next scan):
   * the phrase table and the word trie are each a chain of dependent loads,
   * and two chains in one loop overlap where two loops would pay for both.
   */
  scan(text: string, found: (phrase: Phrase, start: number, end: number) => void): void {
    if (text.length >= TWO_STREAMS.from) {
      this.scanTwo(text, found);
      return;
    }
    const { steps, column, columns, children, emits, fail, outputs, from, lengths, boundaries, used, phrases } = this;
    const { next: wordNext, dead, flags: wordFlags, flags2: wordFlags2 } = wordTable();
    const length = text.length;
    const { starts, ends, flags, flags2, nodes } = wordBuffers(length);
    let count = 0;
    let union = 0;
    let union2 = 0;
    let wordStart = -1; // where the word being read starts, -1 between words
    let word = 0; // its trie node, `dead` once it left the trie
    let row = 0; // the current phrase node's row offset
    // One step past the end, where a character that is no letter closes the last word.
    for (let i = 0; i <= length; i++) {
      const c = i < length ? text.charCodeAt(i) : 0;
      const letter = c - 97;
      if (letter >= 0 && letter < LETTERS) {
        if (wordStart < 0) {
          wordStart = i;
          word = 0;
        }
        word = wordNext[word * LETTERS + letter] as number;
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
      if (i === length) break;
      let node: number;
      if (c < ASCII) {
        const step = steps[row + (column[c] as number)] as number;
        if (step >= 0) {
          row = step;
          continue;
        }
        row = ~step;
        node = row / columns;
      } else if (used[c] === 1) {
        node = row / columns;
        while (node !== 0 && !(children[node] as Map<number, number>).has(c)) node = fail[node] as number;
        node = (children[node] as Map<number, number>).get(c) ?? 0;
        row = node * columns;
        if (emits[node] === 0) continue;
      } else {
        row = node = 0;
        if (emits[0] === 0) continue;
      }
      const last = from[node + 1] as number;
      for (let k = from[node] as number; k < last; k++) {
        const index = outputs[k] as number;
        const start = i + 1 - (lengths[index] as number);
        const boundary = boundaries[index] as number;
        if (boundary !== BOUNDARY.none && isWordChar(text.charCodeAt(start - 1))) continue;
        if (boundary === BOUNDARY.word && isWordChar(text.charCodeAt(i + 1))) continue;
        found(phrases[index] as Phrase, start, i + 1);
      }
    }
    keepWords({ count, union, starts, ends, flags, flags2, union2, nodes });
  }

  /**
   * `scan` for a long text, read as two halves stepped in one loop: each step of one half is a chain of
   * dependent loads (the phrase table, the word trie), and two independent chains overlap where one waits.
   * The second half starts at a character after one that is no letter (no word crosses the seam), its phrase
   * state warmed from `depth` characters before it (an automaton's state depends on no more of the text than
   * its deepest node), and its words and phrase ends are held back and given after the first half's.
   */
  private scanTwo(text: string, found: (phrase: Phrase, start: number, end: number) => void): void {
    const { steps, column, columns, children, emits, fail, outputs, from, lengths, boundaries, used, phrases } = this;
    const { next: wordNext, dead, flags: wordFlags, flags2: wordFlags2 } = wordTable();
    const length = text.length;
    let mid = length >> 1;
    while (mid < length && isLetter(text.charCodeAt(mid - 1))) mid++;
    if (mid >= length - 1) {
      TWO_STREAMS.from = Infinity;
      try {
        this.scan(text, found);
      } finally {
        TWO_STREAMS.from = TWO_STREAMS_FROM;
      }
      return;
    }
    const { starts, ends, flags, flags2, nodes } = wordBuffers(length);
    const later = secondBuffers(length - mid);
    const { starts: starts2, ends: ends2, flags: flags2b, flags2: flags22, nodes: nodes2 } = later;
    let heldCount = 0;
    // The second half's phrase state at `mid`: stepped from the root over the `depth` characters before it.
    let row2 = 0;
    for (let i = Math.max(0, mid - this.depth); i < mid; i++) {
      const c = text.charCodeAt(i);
      if (c < ASCII) {
        const step = steps[row2 + (column[c] as number)] as number;
        row2 = step >= 0 ? step : ~step;
      } else if (used[c] === 1) {
        let node = row2 / columns;
        while (node !== 0 && !(children[node] as Map<number, number>).has(c)) node = fail[node] as number;
        row2 = ((children[node] as Map<number, number>).get(c) ?? 0) * columns;
      } else row2 = 0;
    }
    let count = 0;
    let count2 = 0;
    let union = 0;
    let union2 = 0;
    let wordStart = -1;
    let word = 0;
    let row = 0;
    let wordStart2 = -1;
    let word2 = 0;
    const span = Math.max(mid, length - mid);
    for (let k = 0; k <= span; k++) {
      // The first half, at `k`: one step past its end closes its last word (the character there is no letter).
      if (k <= mid) {
        const i = k;
        const c = i < mid ? text.charCodeAt(i) : 0;
        const letter = c - 97;
        if (letter >= 0 && letter < LETTERS) {
          if (wordStart < 0) {
            wordStart = i;
            word = 0;
          }
          word = wordNext[word * LETTERS + letter] as number;
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
        if (i < mid) {
          let node = -1;
          if (c < ASCII) {
            const step = steps[row + (column[c] as number)] as number;
            if (step >= 0) row = step;
            else {
              row = ~step;
              node = row / columns;
            }
          } else if (used[c] === 1) {
            node = row / columns;
            while (node !== 0 && !(children[node] as Map<number, number>).has(c)) node = fail[node] as number;
            node = (children[node] as Map<number, number>).get(c) ?? 0;
            row = node * columns;
            if (emits[node] === 0) node = -1;
          } else {
            row = 0;
            node = emits[0] === 0 ? -1 : 0;
          }
          if (node >= 0) {
            const last = from[node + 1] as number;
            for (let o = from[node] as number; o < last; o++) {
              const index = outputs[o] as number;
              const start = i + 1 - (lengths[index] as number);
              const boundary = boundaries[index] as number;
              if (boundary !== BOUNDARY.none && isWordChar(text.charCodeAt(start - 1))) continue;
              if (boundary === BOUNDARY.word && isWordChar(text.charCodeAt(i + 1))) continue;
              found(phrases[index] as Phrase, start, i + 1);
            }
          }
        }
      }
      // The second half, at `mid + k`, one step past the end of the text likewise.
      const j = mid + k;
      if (j <= length) {
        const c = j < length ? text.charCodeAt(j) : 0;
        const letter = c - 97;
        if (letter >= 0 && letter < LETTERS) {
          if (wordStart2 < 0) {
            wordStart2 = j;
            word2 = 0;
          }
          word2 = wordNext[word2 * LETTERS + letter] as number;
        } else if (wordStart2 >= 0) {
          const groups = wordFlags[word2] as number;
          const groups2 = wordFlags2[word2] as number;
          starts2[count2] = wordStart2;
          ends2[count2] = j;
          flags2b[count2] = groups;
          flags22[count2] = groups2;
          nodes2[count2] = word2 === dead ? 0 : word2;
          union |= groups;
          union2 |= groups2;
          count2++;
          wordStart2 = -1;
        }
        if (j < length) {
          let node = -1;
          if (c < ASCII) {
            const step = steps[row2 + (column[c] as number)] as number;
            if (step >= 0) row2 = step;
            else {
              row2 = ~step;
              node = row2 / columns;
            }
          } else if (used[c] === 1) {
            node = row2 / columns;
            while (node !== 0 && !(children[node] as Map<number, number>).has(c)) node = fail[node] as number;
            node = (children[node] as Map<number, number>).get(c) ?? 0;
            row2 = node * columns;
            if (emits[node] === 0) node = -1;
          } else {
            row2 = 0;
            node = emits[0] === 0 ? -1 : 0;
          }
          if (node >= 0) {
            const last = from[node + 1] as number;
            for (let o = from[node] as number; o < last; o++) {
              const index = outputs[o] as number;
              const start = j + 1 - (lengths[index] as number);
              const boundary = boundaries[index] as number;
              if (boundary !== BOUNDARY.none && isWordChar(text.charCodeAt(start - 1))) continue;
              if (boundary === BOUNDARY.word && isWordChar(text.charCodeAt(j + 1))) continue;
              if (heldCount * 2 + 1 >= later.phrases.length) later.phrases = grow(later.phrases);
              const h = later.phrases;
              h[heldCount * 2] = index;
              h[heldCount * 2 + 1] = start;
              heldCount++;
            }
          }
        }
      }
    }
    const h = later.phrases;
    for (let n = 0; n < heldCount; n++) {
      const index = h[n * 2] as number;
      const start = h[n * 2 + 1] as number;
      found(phrases[index] as Phrase, start, start + (lengths[index] as number));
    }
    starts.set(starts2.subarray(0, count2), count);
    ends.set(ends2.subarray(0, count2), count);
    flags.set(flags2b.subarray(0, count2), count);
    flags2.set(flags22.subarray(0, count2), count);
    nodes.set(nodes2.subarray(0, count2), count);
    count += count2;
    keepWords({ count, union, starts, ends, flags, flags2, union2, nodes });
  }
}

/** 1 for each UTF-16 code unit beyond ASCII that the phrases hold (the automaton steps by code unit). */
function unitsBeyondAscii(phrases: readonly Phrase[]): Uint8Array {
  const used = new Uint8Array(0x10000);
  for (const phrase of phrases)
    for (let i = 0; i < phrase.text.length; i++) {
      const c = phrase.text.charCodeAt(i);
      if (c >= ASCII) used[c] = 1;
    }
  return used;
}

/** Letters and digits of the alphabetic scripts (Latin, Greek, Cyrillic); not CJK, which is written without spaces. */
export function isWordChar(c: number): boolean {
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a);
  return (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7) || (c >= 0x370 && c <= 0x52f);
}
