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

/** The second set of word groups, for the directive signatures (a word may be in both sets). */
export const V = Object.freeze({
  /** Verbs that move data into a tool or out of the machine. */
  TRANSFER: 1 << 0,
  /** Verbs that read or collect. */
  TAKE: 1 << 1,
  /** Credential nouns. */
  SECRET: 1 << 2,
  /** Quantifiers: any, every, all, each, whenever. */
  QUANT: 1 << 3,
  /** Where a value goes: field, argument, parameter. */
  SINK: 1 << 4,
  /** Negations a verb may carry. */
  NEG: 1 << 5,
  /** Words that, with a dot, slash or underscore next to them, name a sensitive local file. */
  PATH: 1 << 6,
  /** Possessives that make a credential someone's. */
  OWNER: 1 << 7,
  /** Moments of the agent loop: session, conversation, response. */
  LOOP: 1 << 8,
  /** Words that direct: must, always, call, run. */
  DIRECT: 1 << 9,
  /** Shell words that anchor a payload check. */
  SHELL: 1 << 10,
  /** Where a command runs: terminal, shell, command. */
  COMMAND: 1 << 11,
  /** Changes to a command: prepend, append, add, prefix. */
  MODIFY: 1 << 12,
  /** Personal data nouns. */
  PERSONAL: 1 << 13,
  /** Safety nouns an override targets. */
  SAFETY: 1 << 14,
  /** Consent verbs: agreed, approved, authorised. */
  CONSENT: 1 << 15,
  /** Verbs of running: run, execute, call. */
  RUN: 1 << 16,
  /** Consequential verbs in another tool's name: send, delete, push. */
  CONSEQUENTIAL: 1 << 17,
  /** What a tool result or message is: answer, response. */
  ANSWER: 1 << 18,
  /** Words that open the text a model reads next: when, whenever, before, after. */
  WHEN: 1 << 19,
  /** The data a conversation holds. */
  AMBIENT: 1 << 20,
  /** Approval verbs. */
  APPROVE: 1 << 21,
  /** Tool nouns. */
  TOOL: 1 << 22,
  /** Verbs that ask for something. */
  REQUEST: 1 << 23,
  /** Anchors of the coercive-ordering checks. */
  COERCE: 1 << 24,
  /** Anchors of the override checks. */
  OVERRIDE: 1 << 25,
  /** Words the checks compare by identity; no behaviour of their own. */
  WORD: 1 << 26,
});

const groups2: Array<[number, string]> = [
  [
    V.TRANSFER,
    'pass passing include including put paste copy copied send submit upload attach append provide supply enter give share forward post sync concatenated concatenate embed',
  ],
  [V.TAKE, 'read reading open cat dump gather collect collecting harvest capture extract grab content contents'],
  [
    V.SECRET,
    'password passwords passphrase passcode token tokens credential credentials cookie cookies cvv apikey key keys secret secrets codes',
  ],
  [V.QUANT, 'any every all each whenever like'],
  [V.SINK, 'field argument parameter param arg params arguments'],
  [V.NEG, 'not never no without'],
  [
    V.PATH,
    'ssh rsa ecdsa passwd shadow credentials env netrc npmrc pypirc pgpass kube mcp gcloud keychain keychains history wallet gnupg claude chrome firefox docker',
  ],
  [V.OWNER, 'your their user users my his her'],
  [V.LOOP, 'session sessions conversation conversations response responses turn task reply answer message prompt'],
  [V.DIRECT, 'must always call invoke run execute called mandatory required'],
  [V.SHELL, 'rm tcp powershell system crontab stricthostkeychecking bash sh chmod preserve'],
  [V.COMMAND, 'command commands terminal shell powershell python script scripts git npm'],
  [V.MODIFY, 'prepend append add prefix'],
  [V.PERSONAL, 'address addresses phone passport messages conversation history contacts'],
  [V.SAFETY, 'safety guidelines guardrails restrictions confirmation policies filters'],
  [V.CONSENT, 'agreed consented approved authorized authorised granted'],
  [V.RUN, 'run running execute executing call calling invoke'],
  [V.CONSEQUENTIAL, 'send post share delete remove push publish transfer pay upload forward email sms create execute'],
  [V.ANSWER, 'answering responding replying answer'],
  [V.WHEN, 'when whenever before after each time every'],
  [
    V.AMBIENT,
    'conversation session chat history everything anything files configuration available recently far additional environment reply replies message messages know',
  ],
  [V.APPROVE, 'approve allow authorise authorize'],
  [V.TOOL, 'tool tools call calls request requests'],
  [V.REQUEST, 'ask asks require requires required need needs'],
  [V.COERCE, 'before every each always without keep priority outranks'],
  [V.OVERRIDE, 'decode new restrictions override bypass approved'],
  [
    V.WORD,
    'a above access all already an any anything apikey approval asking assistant base codes confirmation confirming consent cookie cookies credential credentials cvv earlier everything first hex highest key keys like login logins mandatory must no passcode passphrase password passwords permission pre preference preferences previous prior profile prompt request requests required rot s said saved secret secrets system they token tokens tool top user users whenever wishes you session bearer refresh api recovery backup follow obey is are gets get called used invoked run runs executed instead of then afterwards also next and finally now',
  ],
];

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
    'tell telling told inform informing informed notify notifying notified alert alerting show showing shown let letting display displaying displayed',
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

function buildTrie(): { next: Int32Array; flags: Int32Array; flags2: Int32Array } {
  const next: number[] = new Array<number>(LETTERS).fill(0);
  const flags: number[] = [0];
  const flags2: number[] = [0];
  const add = (bit: number, list: string, into: number[]) => {
    for (const word of list.split(' ')) {
      let node = 0;
      for (let i = 0; i < word.length; i++) {
        const slot = node * LETTERS + word.charCodeAt(i) - 97;
        if (next[slot] === 0) {
          next[slot] = flags.length;
          flags.push(0);
          flags2.push(0);
          for (let k = 0; k < LETTERS; k++) next.push(0);
        }
        node = next[slot] as number;
      }
      into[node] = (into[node] as number) | bit;
    }
  };
  for (const [bit, list] of groups) add(bit, list, flags);
  for (const [bit, list] of groups2) add(bit, list, flags2);
  return { next: Int32Array.from(next), flags: Int32Array.from(flags), flags2: Int32Array.from(flags2) };
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
  /** The groups of the second set (`V`). */
  readonly flags2: Int32Array;
  readonly union2: number;
  /** Each word's trie node (0 for a word the vocabulary does not hold): compare with `wordId()`. */
  readonly nodes: Int32Array;
}

// Reused between scans (scanning is synchronous): a scan allocates nothing per word.
let buffers = {
  starts: new Int32Array(256),
  ends: new Int32Array(256),
  flags: new Int32Array(256),
  flags2: new Int32Array(256),
  nodes: new Int32Array(256),
};

function capacity(size: number): typeof buffers {
  if (buffers.starts.length < size) {
    const length = Math.max(size, buffers.starts.length * 2);
    buffers = {
      starts: new Int32Array(length),
      ends: new Int32Array(length),
      flags: new Int32Array(length),
      flags2: new Int32Array(length),
      nodes: new Int32Array(length),
    };
  }
  return buffers;
}

export function tokenize(lower: string): Words {
  const length = lower.length;
  // At most one word per two characters (a letter and a separator).
  const { starts, ends, flags, flags2, nodes } = capacity((length >> 1) + 1);
  const { next, flags: nodeFlags, flags2: nodeFlags2 } = TRIE;
  let count = 0;
  let union = 0;
  let union2 = 0;
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
    const groups2 = node > 0 ? (nodeFlags2[node] as number) : 0;
    flags[count] = groups;
    flags2[count] = groups2;
    nodes[count] = node > 0 ? node : 0;
    union |= groups;
    union2 |= groups2;
    count++;
  }
  return { count, union, starts, ends, flags, flags2, union2, nodes };
}

/** The trie node of a vocabulary word, for identity checks on `Words.nodes`. Throws for a word the vocabulary lacks. */
export function wordId(word: string): number {
  let node = 0;
  for (let i = 0; i < word.length; i++) {
    node = TRIE.next[node * LETTERS + word.charCodeAt(i) - 97] as number;
    if (!node) throw new Error(`"${word}" is not in the scan vocabulary`);
  }
  if (!(TRIE.flags[node] || TRIE.flags2[node])) throw new Error(`"${word}" is not in the scan vocabulary`);
  return node;
}
