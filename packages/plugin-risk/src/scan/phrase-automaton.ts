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

export class PhraseAutomaton {
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
  }

  /**
   * Calls `found` with each phrase that occurs in `text` with its boundaries
   * met, in order of its end. The same loop tags the text's ASCII words as
   * `tokenize` does (read them with `taggedWords()` before the next scan):
   * the phrase table and the word trie are each a chain of dependent loads,
   * and two chains in one loop overlap where two loops would pay for both.
   */
  scan(text: string, found: (phrase: Phrase, start: number, end: number) => void): void {
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
