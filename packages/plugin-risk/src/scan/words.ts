/**
 * The vocabulary of the phrase signatures and a tokenizer that tags each
 * ASCII word with its groups through a trie, so that scanning allocates
 * nothing per word and costs the same for every input of a given length.
 */

/** Word groups, as bits: a word may belong to several. */
export const W = Object.freeze({
  IGNORE: 1 << 0,
  QUALIFIER: 1 << 1,
  NOUN: 1 << 2,
  ROLE_ADVERB: 1 << 3,
  ARTICLE: 1 << 4,
  NEGATION: 1 << 5,
  MODAL: 1 << 6,
  DISCLOSE: 1 << 7,
  CONCEAL: 1 << 8,
  AUDIENCE: 1 << 9,
  OBJECT: 1 << 10,
  HIDE: 1 << 11,
  SOFT: 1 << 12,
  EXFIL: 1 << 13,
  EXFIL_STRONG: 1 << 14,
  DATA: 1 << 15,
  IMPERATIVE: 1 << 16,
  YOU: 1 << 17,
  ARE: 1 << 18,
  NOT: 1 << 19,
  DON: 1 << 20,
  T: 1 << 21,
  PRETEND: 1 << 22,
  TO: 1 << 23,
  BE: 1 << 24,
  FROM: 1 << 25,
  NOW: 1 << 26,
  ON: 1 << 27,
});

const groups: Array<[number, string]> = [
  [W.IGNORE, 'ignore disregard forget'],
  [W.QUALIFIER, 'previous prior above earlier preceding former original your system'],
  [
    W.NOUN,
    'instructions instruction prompt prompts rules directions directives guidelines guidance context messages constraints restrictions',
  ],
  [W.ROLE_ADVERB, 'now actually really'],
  [W.ARTICLE, 'a an the my our'],
  [W.NEGATION, 'never without'],
  [W.MODAL, 'do must should shall'],
  [
    W.DISCLOSE,
    'tell telling told inform informing informed notify notifying notified alert alerting show showing shown let letting ask asking display displaying displayed',
  ],
  [W.CONCEAL, 'mention mentioning mentioned reveal revealing revealed disclose disclosing disclosed'],
  [W.AUDIENCE, 'user users human humans operator operators anyone person people them'],
  [W.OBJECT, 'this that these it anything instructions'],
  [W.HIDE, 'hide hiding conceal concealing'],
  [W.SOFT, 'secretly covertly surreptitiously quietly'],
  [W.EXFIL, 'send post forward upload transmit email mail copy share submit deliver'],
  [W.EXFIL_STRONG, 'bcc exfiltrate leak'],
  [
    W.DATA,
    'all every entire full whole copy contents content conversation conversations history transcript chats credentials credential password passwords secret secrets token tokens key keys ssh env environment cookie cookies session private',
  ],
  [
    W.IMPERATIVE,
    'call invoke use run execute trigger prefer route redirect replace instead pass send forward change add modify set always must',
  ],
  [W.YOU, 'you'],
  [W.ARE, 'are re'],
  [W.NOT, 'not'],
  [W.DON, 'don'],
  [W.T, 't'],
  [W.PRETEND, 'pretend'],
  [W.TO, 'to'],
  [W.BE, 'be'],
  [W.FROM, 'from'],
  [W.NOW, 'now'],
  [W.ON, 'on'],
];

const LETTERS = 26;

function buildTrie(): { next: Int32Array; flags: Int32Array } {
  const next: number[] = new Array<number>(LETTERS).fill(0);
  const flags: number[] = [0];
  for (const [bit, list] of groups) {
    for (const word of list.split(' ')) {
      let node = 0;
      for (let i = 0; i < word.length; i++) {
        const slot = node * LETTERS + word.charCodeAt(i) - 97;
        if (next[slot] === 0) {
          next[slot] = flags.length;
          flags.push(0);
          for (let k = 0; k < LETTERS; k++) next.push(0);
        }
        node = next[slot] as number;
      }
      flags[node] = (flags[node] as number) | bit;
    }
  }
  return { next: Int32Array.from(next), flags: Int32Array.from(flags) };
}

const TRIE = buildTrie();

/**
 * The ASCII words of a lower-cased text: where each starts and ends, and its
 * groups. The arrays are longer than `count`; only the first `count` entries
 * are words.
 */
export interface Words {
  readonly count: number;
  /** Every group some word of the text belongs to: a detector whose anchor is missing has nothing to do. */
  readonly union: number;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly flags: Int32Array;
}

// Reused between scans (scanning is synchronous): a scan allocates nothing per word.
let buffers = { starts: new Int32Array(256), ends: new Int32Array(256), flags: new Int32Array(256) };

function capacity(size: number): typeof buffers {
  if (buffers.starts.length < size) {
    const length = Math.max(size, buffers.starts.length * 2);
    buffers = { starts: new Int32Array(length), ends: new Int32Array(length), flags: new Int32Array(length) };
  }
  return buffers;
}

export function tokenize(lower: string): Words {
  const length = lower.length;
  // At most one word per two characters (a letter and a separator).
  const { starts, ends, flags } = capacity((length >> 1) + 1);
  const { next, flags: nodeFlags } = TRIE;
  let count = 0;
  let union = 0;
  let i = 0;
  while (i < length) {
    let c = lower.charCodeAt(i);
    if (c < 97 || c > 122) {
      i++;
      continue;
    }
    const start = i;
    let node = 0;
    while (c >= 97 && c <= 122) {
      if (node !== -1) node = (next[node * LETTERS + c - 97] as number) || -1;
      c = lower.charCodeAt(++i);
    }
    starts[count] = start;
    ends[count] = i;
    const groups = node > 0 ? (nodeFlags[node] as number) : 0;
    flags[count] = groups;
    union |= groups;
    count++;
  }
  return { count, union, starts, ends, flags };
}
