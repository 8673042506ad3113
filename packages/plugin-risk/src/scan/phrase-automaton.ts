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
  /**
   * Per code unit beyond ASCII, the node the root steps to on it (0 when the root has no child there), or -1 for a
   * unit no phrase holds, which leads back to the root from every node (64 K entries, built with the automaton).
   */
  private readonly rootBeyond: Int32Array;
  /**
   * The steps beyond ASCII that differ from the root's: node `n`'s are `beyondUnits[beyondFrom[n], beyondFrom[n + 1])`,
   * sorted, each leading to `beyondNext` at the same index.
   */
  private readonly beyondFrom: Int32Array;
  private readonly beyondUnits: Uint16Array;
  private readonly beyondNext: Int32Array;
  /** The phrases ending at each node, its failure chain's included: `outputs[from[node]]` to `outputs[from[node + 1]]`. */
  private readonly outputs: Int32Array;
  private readonly from: Int32Array;
  /** 1 where a node has outputs: the hot loop reads one byte. */
  private readonly emits: Uint8Array;
  /** Each phrase's length and boundary (`BOUNDARY`), read where it may end. */
  private readonly lengths: Int32Array;
  private readonly boundaries: Uint8Array;

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
    const beyond = stepsBeyondAscii(children, fail);
    this.rootBeyond = beyond.root;
    this.beyondFrom = beyond.from;
    this.beyondUnits = beyond.units;
    this.beyondNext = beyond.next;
    this.from = new Int32Array(count + 1);
    outputs.forEach((list, node) => (this.from[node + 1] = (this.from[node] as number) + list.length));
    this.outputs = Int32Array.from(outputs.flat());
    this.emits = Uint8Array.from(outputs, (list) => (list.length > 0 ? 1 : 0));
    this.lengths = Int32Array.from(phrases, (phrase) => phrase.text.length);
    this.boundaries = Uint8Array.from(phrases, (phrase) => BOUNDARY[phrase.boundary]);
  }

  /**
   * Calls `found` with each phrase that occurs in `text` with its boundaries
   * met, in order of its end. The same loop tags the text's ASCII words as
   * `tokenize` does (read them with `taggedWords()` before the next scan):
   * the phrase table and the word trie are each a chain of dependent loads,
   * and two chains in one loop overlap where two loops would pay for both.
   */
  scan(text: string, found: (phrase: Phrase, start: number, end: number) => void): void {
    const { steps, column, columns, emits, outputs, from, lengths, boundaries, phrases } = this;
    const { rootBeyond } = this;
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
      } else if ((node = rootBeyond[c] as number) >= 0) {
        node = this.stepBeyond(row / columns, c, node);
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
   * The node the automaton steps to from `node` on a code unit `c` beyond
   * ASCII that some phrase holds: the root's step on it (`root`), unless the
   * node (or a node on its failure chain) has a child on this unit.
   */
  private stepBeyond(node: number, c: number, root: number): number {
    const { beyondUnits } = this;
    let low = this.beyondFrom[node] as number;
    let high = this.beyondFrom[node + 1] as number;
    while (low < high) {
      const middle = (low + high) >> 1;
      const unit = beyondUnits[middle] as number;
      if (unit === c) return this.beyondNext[middle] as number;
      if (unit < c) low = middle + 1;
      else high = middle;
    }
    return root;
  }

  /**
   * `scan` of a text held as parts (its `parts` one after another, never
   * joined): the automaton's state and the word being read carry from one
   * part to the next, and offsets are the whole text's. A loop of its own, so
   * the string loop's code and what the engine learns of it stay as they are
   * (one loop for both made many short strings about 15 % slower once long
   * texts in pieces had been scanned).
   */
  scanParts(text: PartedText, found: (phrase: Phrase, start: number, end: number) => void): void {
    const { steps, column, columns, emits, outputs, from, lengths, boundaries, phrases } = this;
    const { rootBeyond } = this;
    const { next: wordNext, dead, flags: wordFlags, flags2: wordFlags2 } = wordTable();
    const parts = text.parts;
    const { starts, ends, flags, flags2, nodes } = wordBuffers(text.length);
    let count = 0;
    let union = 0;
    let union2 = 0;
    let wordStart = -1; // where the word being read starts, -1 between words
    let word = 0; // its trie node, `dead` once it left the trie
    let row = 0; // the current phrase node's row offset
    let base = 0; // where the current part starts in the text
    for (let p = 0; p < parts.length; p++) {
      const part = parts[p] as string;
      const length = part.length;
      // In the last part, one step past its end, where a character that is no letter closes the text's last word.
      const stop = p === parts.length - 1 ? length : length - 1;
      for (let j = 0; j <= stop; j++) {
        const c = j < length ? part.charCodeAt(j) : 0;
        const letter = c - 97;
        if (letter >= 0 && letter < LETTERS) {
          if (wordStart < 0) {
            wordStart = base + j;
            word = 0;
          }
          word = wordNext[word * LETTERS + letter] as number;
        } else if (wordStart >= 0) {
          const groups = wordFlags[word] as number;
          const groups2 = wordFlags2[word] as number;
          starts[count] = wordStart;
          ends[count] = base + j;
          flags[count] = groups;
          flags2[count] = groups2;
          nodes[count] = word === dead ? 0 : word;
          union |= groups;
          union2 |= groups2;
          count++;
          wordStart = -1;
        }
        if (j === length) break;
        let node: number;
        if (c < ASCII) {
          const step = steps[row + (column[c] as number)] as number;
          if (step >= 0) {
            row = step;
            continue;
          }
          row = ~step;
          node = row / columns;
        } else if ((node = rootBeyond[c] as number) >= 0) {
          node = this.stepBeyond(row / columns, c, node);
          row = node * columns;
          if (emits[node] === 0) continue;
        } else {
          row = node = 0;
          if (emits[0] === 0) continue;
        }
        const last = from[node + 1] as number;
        for (let k = from[node] as number; k < last; k++) {
          const index = outputs[k] as number;
          const start = j + 1 - (lengths[index] as number); // in the part; before it when negative
          const boundary = boundaries[index] as number;
          if (boundary !== BOUNDARY.none) {
            const before = start > 0 ? part.charCodeAt(start - 1) : text.charCodeAt(base + start - 1);
            if (isWordChar(before)) continue;
          }
          if (boundary === BOUNDARY.word) {
            const after = j + 1 < length ? part.charCodeAt(j + 1) : text.charCodeAt(base + j + 1);
            if (isWordChar(after)) continue;
          }
          found(phrases[index] as Phrase, base + start, base + j + 1);
        }
      }
      base += length;
    }
    keepWords({ count, union, starts, ends, flags, flags2, union2, nodes });
  }
}

/** A text held as parts, read one after another (`Pieces` in normalise.ts). */
export interface PartedText {
  readonly parts: readonly string[];
  readonly length: number;
  charCodeAt(index: number): number;
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
