import type { Words } from './words.js';
import { tokenize } from './words.js';

/**
 * The tokenizer's vocabulary trie as flat tables, so that the phrase
 * automaton's pass can tag the words of a text as it reads them (one loop
 * over the text instead of two). The trie is read back through `tokenize`
 * itself: each word it tags carries the trie node its letters reached, so
 * a breadth-first walk that tags every one-letter extension of the known
 * prefixes finds every node, with the same numbers (`wordId` compares them)
 * and the same groups. One `tokenize` call per depth: a few milliseconds
 * once, at load, whatever the vocabulary holds.
 */
export interface WordTable {
  /** Per node, 26 wide: the child node reached by each letter, `dead` for none. */
  readonly next: Int32Array;
  /** The node past the trie's words: every letter leads back to it, and it has no groups. */
  readonly dead: number;
  /** The node's groups (`W`). */
  readonly flags: Int32Array;
  /** The node's groups of the second set (`V`). */
  readonly flags2: Int32Array;
}

export const LETTERS = 26;

function readTable(): WordTable {
  const edges: Array<[parent: number, letter: number, child: number]> = [];
  const flags = new Map<number, [number, number]>([[0, [0, 0]]]);
  let frontier: Array<[prefix: string, node: number]> = [['', 0]];
  while (frontier.length > 0) {
    const probes: Array<[prefix: string, parent: number, letter: number]> = [];
    for (const [prefix, node] of frontier)
      for (let letter = 0; letter < LETTERS; letter++)
        probes.push([prefix + String.fromCharCode(97 + letter), node, letter]);
    const tagged = tokenize(probes.map(([word]) => word).join(' '));
    frontier = [];
    probes.forEach(([word, parent, letter], k) => {
      const child = tagged.nodes[k] as number;
      if (child === 0) return;
      edges.push([parent, letter, child]);
      flags.set(child, [tagged.flags[k] as number, tagged.flags2[k] as number]);
      frontier.push([word, child]);
    });
  }
  const dead = Math.max(...flags.keys()) + 1;
  const size = dead + 1;
  const table = {
    next: new Int32Array(size * LETTERS).fill(dead),
    dead,
    flags: new Int32Array(size),
    flags2: new Int32Array(size),
  };
  for (const [parent, letter, child] of edges) table.next[parent * LETTERS + letter] = child;
  for (const [node, [first, second]] of flags) {
    table.flags[node] = first;
    table.flags2[node] = second;
  }
  return table;
}

let table: WordTable | undefined;
/** The table, read from the trie on first use (the phrase automaton's build), not at import. */
export const wordTable = (): WordTable => (table ??= readTable());

/** Reused between scans (scanning is synchronous): tagging allocates nothing per word. */
export interface WordBuffers {
  starts: Int32Array;
  ends: Int32Array;
  flags: Int32Array;
  flags2: Int32Array;
  nodes: Int32Array;
}

let buffers: WordBuffers = allocate(256);

function allocate(length: number): WordBuffers {
  return {
    starts: new Int32Array(length),
    ends: new Int32Array(length),
    flags: new Int32Array(length),
    flags2: new Int32Array(length),
    nodes: new Int32Array(length),
  };
}

/** Buffers for the words of a text of `length` characters: at most one word per two characters. */
export function wordBuffers(length: number): WordBuffers {
  const size = (length >> 1) + 1;
  if (buffers.starts.length < size) buffers = allocate(Math.max(size, buffers.starts.length * 2));
  return buffers;
}

const NO_WORDS: Words = {
  count: 0,
  union: 0,
  union2: 0,
  starts: new Int32Array(0),
  ends: new Int32Array(0),
  flags: new Int32Array(0),
  flags2: new Int32Array(0),
  nodes: new Int32Array(0),
};

let tagged: Words = NO_WORDS;

/** Keeps the words the last pass tagged. */
export function keepWords(words: Words): void {
  tagged = words;
}

/**
 * The ASCII words of the text the phrase automaton read last, as `tokenize`
 * gives them. Valid until the next pass: read them before scanning again.
 */
export function taggedWords(): Words {
  return tagged;
}
