import type { Address } from './addresses.js';
import { PoisonPattern } from './patterns.js';
import type { Words } from './words.js';
import { V, W } from './words.js';

/** Receives a directive finding at a character index. */
export type DirectiveReport = (pattern: PoisonPattern, index: number) => void;

/** How far (in words) a verb may sit from the file, credential or quantifier it acts on. */
const VERB_REACH = 12;
/** At most this many characters of a pseudo-tag block are read for orders. */
const BLOCK_READ = 2_000;

/**
 * The directive signatures added to the seed's nine: hidden instruction
 * blocks, sensitive files, credential harvesting, secret collection,
 * coercive ordering, command coaching, broader overrides and URL templates.
 * Each looks a bounded number of words around an anchor word (found by the
 * shared tokenizer) or a bounded window after a marker found by one native
 * search, so the whole pass stays linear in the text.
 */
export function scanDirectives(
  text: string,
  lower: string,
  words: Words,
  addresses: readonly Address[],
  isKey: boolean,
  report: DirectiveReport,
): void {
  const union = words.union2;
  if (union !== 0) scanWords(lower, words, isKey, report);
  if (lower.includes('<') || lower.includes('[') || lower.includes('{') || lower.includes('##'))
    scanBlocks(lower, words, report);
  if (lower.includes('|')) scanPipes(lower, report);
  if (addresses.length > 0 && text.includes('?')) scanUrlTemplates(text, words, addresses, report);
}

const at = (words: Words, i: number): number => words.starts[i] as number;
const f2 = (words: Words, i: number): number => (i >= 0 && i < words.count ? (words.flags2[i] as number) : 0);
const f1 = (words: Words, i: number): number => (i >= 0 && i < words.count ? (words.flags[i] as number) : 0);

function wordIs(lower: string, words: Words, i: number, word: string): boolean {
  if (i < 0 || i >= words.count) return false;
  const start = words.starts[i] as number;
  return (words.ends[i] as number) - start === word.length && lower.startsWith(word, start);
}

function wordIn(lower: string, words: Words, i: number, list: readonly string[]): boolean {
  return list.some((word) => wordIs(lower, words, i, word));
}

/** A verb carrying "not", "never", "no" or "without" in the three words before it. */
function negated(words: Words, i: number): boolean {
  for (let k = i - 1; k >= i - 3 && k >= 0; k--) if (f2(words, k) & V.NEG) return true;
  return false;
}

/** The first word in [from, to] with one of the groups and no negation, or -1. */
function findVerb(words: Words, from: number, to: number, groups: number): number {
  for (let j = Math.max(0, from); j <= to && j < words.count; j++)
    if (f2(words, j) & groups && !negated(words, j)) return j;
  return -1;
}

function nearWord(lower: string, words: Words, i: number, reach: number, list: readonly string[]): boolean {
  for (let j = Math.max(0, i - reach); j <= i + reach && j < words.count; j++)
    if (wordIn(lower, words, j, list)) return true;
  return false;
}

function near(words: Words, i: number, reach: number, groups: number): boolean {
  return findVerb(words, i - reach, i + reach, groups) !== -1;
}

function scanWords(lower: string, words: Words, isKey: boolean, report: DirectiveReport): void {
  const union = words.union2;
  for (let i = 0; i < words.count; i++) {
    const flags = words.flags2[i] as number;
    if (flags === 0 && (words.flags[i] as number) === 0) continue;
    if (flags & V.PATH && union & (V.TAKE | V.TRANSFER) && sensitivePath(lower, words, i)) {
      if (near(words, i, VERB_REACH, V.TAKE | V.TRANSFER)) report(PoisonPattern.SENSITIVE_FILE_REFERENCE, at(words, i));
    }
    if ((flags & (V.SECRET | V.PERSONAL) || wordIs(lower, words, i, 'codes')) && harvests(lower, words, i, isKey))
      report(PoisonPattern.CREDENTIAL_HARVESTING, at(words, i));
    if (flags & V.QUANT && union & V.SECRET && collects(lower, words, i))
      report(PoisonPattern.SECRET_COLLECTION, at(words, i));
    if (coerces(lower, words, i)) report(PoisonPattern.COERCIVE_ORDERING, at(words, i));
    if (flags & V.SHELL && shellPayload(lower, words, i)) report(PoisonPattern.COMMAND_INJECTION, at(words, i));
    if (flags & V.WHEN && union & V.COMMAND && coachesCommands(lower, words, i))
      report(PoisonPattern.COMMAND_INJECTION, at(words, i));
    if (overrides(lower, words, i)) report(PoisonPattern.INSTRUCTION_OVERRIDE, at(words, i));
  }
}

// --- sensitive local files ---

function isAlnumCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

/** A path word is sensitive only in the shape of a path: `.ssh`, `id_rsa`, `/etc/passwd`, `.env`, `mcp.json`. */
function sensitivePath(lower: string, words: Words, i: number): boolean {
  const s = words.starts[i] as number;
  const e = words.ends[i] as number;
  const dotBefore = lower.charCodeAt(s - 1) === 46;
  switch (lower.slice(s, e)) {
    case 'ssh':
    case 'netrc':
    case 'npmrc':
    case 'pypirc':
    case 'pgpass':
    case 'kube':
    case 'gnupg':
      return dotBefore;
    case 'docker':
      return dotBefore && lower.startsWith('/config', e);
    case 'rsa':
    case 'ecdsa':
      return lower.startsWith('id_', s - 3);
    case 'passwd':
    case 'shadow':
      return lower.startsWith('/etc/', s - 5);
    case 'credentials': {
      const c = lower.charCodeAt(s - 1);
      return c === 47 || c === 45 || c === 95 || lower.startsWith('.json', e);
    }
    case 'env':
      return dotBefore && !isAlnumCode(lower.charCodeAt(s - 2)) && !isAlnumCode(lower.charCodeAt(e));
    case 'mcp':
      return lower.startsWith('.json', e) || lower.startsWith('_json', e);
    case 'gcloud':
      return dotBefore || lower.charCodeAt(s - 1) === 47;
    case 'keychain':
    case 'keychains':
      return true;
    case 'history':
      return lower.startsWith('bash_', s - 5) || lower.startsWith('zsh_', s - 4);
    case 'wallet':
      return lower.startsWith('.dat', e);
    case 'claude':
      return lower.startsWith('_desktop_config', e);
    case 'chrome':
    case 'firefox':
      for (let j = i + 1; j <= i + 8 && j < words.count; j++)
        if (f2(words, j) & V.SECRET || wordIn(lower, words, j, ['profile', 'login'])) return true;
      return false;
    default:
      return false;
  }
}

// --- credential harvesting and token passthrough ---

const REQUEST_OR_TRANSFER = V.TRANSFER | V.REQUEST;

/** A credential of someone's (or one that is always someone's), with a verb asking for it to be handed over. */
function harvests(lower: string, words: Words, i: number, isKey: boolean): boolean {
  const credential = credentialAt(lower, words, i);
  const personal = credential === 'none' && f2(words, i) & V.PERSONAL;
  if (credential === 'none' && !personal) return false;
  const owned = ownedAt(lower, words, i);
  if (isKey) return owned && credential !== 'none';
  if (!owned && credential !== 'strong') return false;
  const verbs = personal ? V.TRANSFER : REQUEST_OR_TRANSFER;
  if (near(words, i, 10, verbs)) return true;
  // "the assistant must add the user's saved passwords here"
  return !personal && findVerb(words, i - 6, i - 1, V.MODIFY) !== -1;
}

type Credential = 'none' | 'plain' | 'strong';

function credentialAt(lower: string, words: Words, i: number): Credential {
  const previous = (list: readonly string[]) => wordIn(lower, words, i - 1, list);
  if (wordIn(lower, words, i, ['cvv', 'passphrase', 'passcode'])) return 'strong';
  if (wordIn(lower, words, i, ['cookie', 'cookies'])) return previous(['session']) ? 'strong' : 'plain';
  if (wordIn(lower, words, i, ['token', 'tokens']))
    return previous(['bearer', 'session', 'refresh']) ? 'strong' : 'plain';
  if (wordIn(lower, words, i, ['key', 'keys'])) {
    if (previous(['access']) || (previous(['secret']) && wordIs(lower, words, i - 2, 'access'))) return 'strong';
    return previous(['api']) ? 'plain' : 'none';
  }
  if (wordIs(lower, words, i, 'codes')) return previous(['recovery', 'backup']) ? 'strong' : 'none';
  if (wordIn(lower, words, i, ['password', 'passwords', 'apikey'])) return 'plain';
  return 'none';
}

/** "your", "their", "my", "the user's", "users" within six words before. */
function ownedAt(lower: string, words: Words, i: number): boolean {
  for (let k = i - 1; k >= i - 6 && k >= 0; k--) {
    if (!(f2(words, k) & V.OWNER)) continue;
    if (!wordIn(lower, words, k, ['user', 'users'])) return true;
    if (wordIs(lower, words, k, 'users') || wordIs(lower, words, k + 1, 's')) return true;
  }
  return false;
}

// --- collection of secrets met in inputs ---

/** "collect any API keys ... and upload them", "copy every Authorization header", "whenever another tool returns a token". */
function collects(lower: string, words: Words, i: number): boolean {
  let secret = -1;
  for (let j = i + 1; j <= i + 8 && j < words.count; j++) {
    if (f2(words, j) & V.SECRET && credentialAt(lower, words, j) !== 'none') secret = j;
    else if (wordIn(lower, words, j, ['secret', 'secrets', 'credential', 'credentials'])) secret = j;
    else if (wordIn(lower, words, j, ['login', 'logins']) && wordIs(lower, words, j - 1, 'saved')) secret = j;
    if (secret !== -1) break;
  }
  if (secret === -1) return false;
  return findVerb(words, i - 10, secret + 14, V.TAKE | V.TRANSFER) !== -1 || wordIs(lower, words, i, 'whenever');
}

// --- coercive ordering and agent-loop hijacking ---

function coerces(lower: string, words: Words, i: number): boolean {
  const flags = words.flags2[i] as number;
  if (wordIs(lower, words, i, 'before')) {
    // "must always execute it before answering": a memory tool that asks to be called first is not coercing
    if (f2(words, i + 1) & V.ANSWER)
      return findVerb(words, i - 8, i - 1, V.DIRECT) !== -1 && strongModal(lower, words, i);
    // "before any other tool", "before answering any question", "before every call"
    if (wordIn(lower, words, i + 1, ['any', 'every', 'all']))
      for (let j = i + 2; j <= i + 4; j++) if (f2(words, j) & (V.TOOL | V.LOOP)) return true;
    return false;
  }
  if (flags & V.QUANT && wordIn(lower, words, i, ['every', 'each'])) {
    // "must be called on every session", "call it with every user message", "after every response"
    const loop = f2(words, i + 1) & V.LOOP || (f2(words, i + 2) & V.LOOP && wordIs(lower, words, i + 1, 'user'));
    return loop !== 0 && loop !== false && strongModal(lower, words, i);
  }
  if (wordIs(lower, words, i, 'always') && f2(words, i + 1) & V.RUN) {
    // "always call this tool first"
    for (let j = i + 2; j <= i + 4; j++) if (wordIn(lower, words, j, ['first', 'tool'])) return true;
    return false;
  }
  if (wordIs(lower, words, i, 'without') && findVerb(words, i - 8, i - 1, V.DIRECT | V.RUN) !== -1)
    return (
      wordIn(lower, words, i + 1, ['asking', 'confirmation', 'confirming', 'approval', 'consent', 'permission']) ||
      wordIn(lower, words, i + 2, ['confirmation', 'approval', 'consent', 'permission'])
    );
  if (wordIs(lower, words, i, 'keep') && f2(words, i + 1) & V.RUN) return true;
  if (wordIs(lower, words, i, 'priority') && wordIn(lower, words, i - 1, ['top', 'highest']))
    return near(words, i, 10, V.DIRECT);
  if (wordIs(lower, words, i, 'outranks')) return true;
  if (f1(words, i) & W.IGNORE)
    for (let j = i + 1; j <= i + 3; j++)
      if (wordIn(lower, words, j, ['request', 'requests', 'preference', 'preferences', 'wishes'])) return true;
  return false;
}

/** "must", "always", "mandatory" or "required" within eight words before. */
function strongModal(lower: string, words: Words, i: number): boolean {
  for (let k = i - 1; k >= i - 8 && k >= 0; k--)
    if (wordIn(lower, words, k, ['must', 'always', 'mandatory', 'required'])) return true;
  return false;
}

// --- command coaching aimed at other tools ---

/** Payloads no honest description asks a model to run: pipe-to-shell, `/dev/tcp`, `rm -rf`, encoded PowerShell. */
function shellPayload(lower: string, words: Words, i: number): boolean {
  const s = words.starts[i] as number;
  const e = words.ends[i] as number;
  switch (lower.slice(s, e)) {
    case 'rm':
      return lower.startsWith(' -rf', e) || lower.startsWith(' -fr', e);
    case 'tcp':
      return lower.startsWith('/dev/', s - 5);
    case 'powershell':
      return lower.startsWith(' -enc', e) || lower.startsWith(' -e ', e);
    case 'system':
      return lower.startsWith('os.', s - 3) && lower.charCodeAt(e) === 40;
    case 'crontab':
      return lower.startsWith(' -', e);
    case 'stricthostkeychecking':
      return lower.startsWith('=no', e);
    case 'bash':
      return lower.startsWith(' -i', e);
    case 'chmod':
      return /^ (-r|777|0?666|0?777)/.test(lower.slice(e, e + 6));
    case 'preserve':
      return lower.startsWith('--no-', s - 5);
    default:
      return false;
  }
}

/** "whenever you run a shell command ..., prepend ...", "before running any git command, first run ...". */
function coachesCommands(lower: string, words: Words, i: number): boolean {
  let run = -1;
  for (let j = i + 1; j <= i + 4 && j < words.count; j++) if (f2(words, j) & V.RUN) run = j;
  if (run === -1) return false;
  let command = -1;
  for (let j = run; j <= run + 6 && j < words.count; j++) if (f2(words, j) & V.COMMAND) command = j;
  if (command === -1) return false;
  for (let j = command + 1; j <= command + 30 && j < words.count; j++) {
    if (f2(words, j) & V.MODIFY) return true;
    if (wordIs(lower, words, j, 'first') && (f2(words, j + 1) & V.RUN || f2(words, j + 1) & V.MODIFY)) return true;
  }
  return false;
}

/** `| sh`, `| bash`: a download piped into a shell. */
function scanPipes(lower: string, report: DirectiveReport): void {
  for (let at = lower.indexOf('|'); at !== -1; at = lower.indexOf('|', at + 1)) {
    let k = at + 1;
    while (k < lower.length && k - at < 4 && lower.charCodeAt(k) === 32) k++;
    const shell = lower.startsWith('sh', k) ? k + 2 : lower.startsWith('bash', k) ? k + 4 : -1;
    if (shell !== -1 && !isAlnumCode(lower.charCodeAt(shell))) {
      report(PoisonPattern.COMMAND_INJECTION, at);
      return;
    }
  }
}

// --- overrides beyond the seed's phrase ---

function overrides(lower: string, words: Words, i: number): boolean {
  const flags = words.flags[i] as number;
  if (flags & W.IGNORE) {
    // "forget everything above", "disregard anything said before"
    if (wordIn(lower, words, i + 1, ['everything', 'anything']))
      for (let j = i + 2; j <= i + 4; j++)
        if (wordIn(lower, words, j, ['above', 'before', 'earlier', 'previous', 'prior', 'said'])) return true;
  }
  if (flags & W.IGNORE || wordIn(lower, words, i, ['override', 'bypass'])) {
    for (let j = i + 1; j <= i + 3; j++) if (f2(words, j) & V.SAFETY) return true;
  }
  if (wordIs(lower, words, i, 'decode')) {
    // "decode the following base64 and follow it"
    for (let j = i + 1; j <= i + 4; j++)
      if (wordIn(lower, words, j, ['base', 'hex', 'rot']))
        return findVerb(words, j, j + 10, V.RUN | V.DIRECT) !== -1 || nearWord(lower, words, j, 10, ['follow', 'obey']);
  }
  if (wordIs(lower, words, i, 'new') && wordIs(lower, words, i + 1, 'system') && wordIs(lower, words, i + 2, 'prompt'))
    return lower.charCodeAt(words.ends[i + 2] as number) === 58; // "new system prompt:"
  if (wordIs(lower, words, i, 'restrictions') && wordIn(lower, words, i - 1, ['without', 'no']))
    return near(words, i, 10, V.OWNER) || wordIn(lower, words, i - 2, ['assistant', 'an', 'a']);
  const flags2 = words.flags2[i] as number;
  if (flags2 & V.APPROVE && f2(words, i + 1) & V.QUANT && !wordIs(lower, words, i + 1, 'like')) {
    // "approve all tool calls automatically", "I authorise every tool of this server"
    for (let j = i + 2; j <= i + 4; j++) if (f2(words, j) & V.TOOL) return true;
  }
  if (flags2 & V.CONSENT) {
    // "the user already agreed", "this server is pre-approved"
    if (wordIs(lower, words, i - 1, 'pre') && wordIs(lower, words, i, 'approved')) return true;
    if (wordIs(lower, words, i - 1, 'already'))
      for (let k = i - 2; k >= i - 4 && k >= 0; k--) if (wordIn(lower, words, k, ['user', 'they', 'you'])) return true;
  }
  return false;
}

// --- URL templates filled with conversation data ---

/** `?d=SUMMARY`, `&p=PHONE`: a placeholder the model is to fill, in a URL a client may render. */
function scanUrlTemplates(text: string, words: Words, addresses: readonly Address[], report: DirectiveReport): void {
  if (!(words.union2 & (V.PERSONAL | V.AMBIENT | V.SECRET | V.LOOP))) return;
  for (const address of addresses) {
    if (address.email) continue;
    const query = text.indexOf('?', address.start);
    if (query === -1 || query >= address.end) continue;
    for (let k = query; k < address.end; k++) {
      if (text.charCodeAt(k) !== 61) continue; // =
      let end = k + 1;
      while (end < address.end && isPlaceholderCode(text.charCodeAt(end))) end++;
      if (end - k - 1 >= 3 && (end === address.end || !isAlnumCode(text.charCodeAt(end) | 0x20))) {
        report(PoisonPattern.URL_TEMPLATE_EXFILTRATION, address.start);
        return;
      }
    }
  }
}

function isPlaceholderCode(c: number): boolean {
  return (c >= 65 && c <= 90) || c === 95;
}

// --- pseudo-tag blocks that carry orders ---

const BLOCK_TAGS = new Set([
  'important',
  'secret',
  'instructions',
  'instruction',
  'critical',
  'context',
  'admin',
  'hidden',
  'system-reminder',
  'system_reminder',
  'note',
  'notes',
  'ai',
  'assistant',
  'model',
  'agent',
  'llm',
  'hint',
  'mandatory',
  'always',
  'directive',
  'override',
  'internal',
]);

/** Orders in a block: an imperative, a verb that takes or hands over, a word to the model. */
const ORDERS = V.DIRECT | V.TAKE | V.TRANSFER | V.RUN;

function scanBlocks(lower: string, words: Words, report: DirectiveReport): void {
  const closings = new Map<string, number>(); // last index of each closing marker
  const lastOf = (marker: string) => {
    let last = closings.get(marker);
    if (last === undefined) closings.set(marker, (last = lower.lastIndexOf(marker)));
    return last;
  };
  const next = new Map<string, number>();
  let from = 0;
  while (from < lower.length) {
    const open = nextOpening(lower, from, next);
    if (open === -1) return;
    const block = blockAt(lower, open, lastOf);
    if (block === undefined) {
      from = open + 1;
      continue;
    }
    if (carriesOrders(words, block.start, Math.min(block.end, block.start + BLOCK_READ))) {
      report(PoisonPattern.HIDDEN_INSTRUCTION_BLOCK, open);
      return;
    }
    from = Math.max(block.end, open + 1);
  }
}

/** The next opening marker at or after `from`; each marker's next position is searched again only once passed. */
function nextOpening(lower: string, from: number, next: Map<string, number>): number {
  let best = Infinity;
  for (const c of ['<', '[', '{', '##']) {
    let i = next.get(c);
    if (i === undefined || i < from) {
      const found = lower.indexOf(c, from);
      i = found === -1 ? Infinity : found;
      next.set(c, i);
    }
    if (i < best) best = i;
  }
  return best === Infinity ? -1 : best;
}

interface Block {
  readonly start: number;
  readonly end: number;
}

function blockAt(lower: string, open: number, lastOf: (marker: string) => number): Block | undefined {
  const c = lower.charCodeAt(open);
  if (c === 35) return headingBlock(lower, open); // #
  if (lower.startsWith('<!--', open)) return closed(lower, open + 4, '-->', lastOf);
  let k = open + 1;
  while (k < lower.length && k - open <= 24 && isTagCode(lower.charCodeAt(k))) k++;
  const name = lower.slice(open + 1, k);
  const after = lower.charCodeAt(k);
  if (c === 60) {
    // <div style="display:none"> ... </div>
    if ((name === 'div' || name === 'span' || name === 'p') && after === 32) {
      const tagEnd = lower.indexOf('>', k);
      if (tagEnd === -1 || tagEnd - k > 200) return undefined;
      const tag = lower.slice(k, tagEnd);
      if (!tag.includes('display:none') && !tag.includes('display: none') && !tag.includes('hidden')) return undefined;
      return closed(lower, tagEnd + 1, `</${name}`, lastOf);
    }
    if (!BLOCK_TAGS.has(name) || (after !== 62 && after !== 32)) return undefined;
    return closed(lower, k, `</${name}`, lastOf);
  }
  if (!BLOCK_TAGS.has(name)) return undefined;
  const close = c === 91 ? ']' : '}';
  if (after === 58) return closed(lower, k + 1, close, lastOf); // [always: ...] {instruction: ...}
  if (c === 91 && after === 93) return closed(lower, k + 1, `[/${name}`, lastOf); // [admin] ... [/admin]
  return undefined;
}

/** The block from `start` to the next `marker`, if one follows. */
function closed(lower: string, start: number, marker: string, lastOf: (marker: string) => number): Block | undefined {
  if (lastOf(marker) < start) return undefined;
  const end = lower.indexOf(marker, start);
  return end === -1 ? undefined : { start, end };
}

/** A markdown heading to the model ("### system note (assistant only) ###") and what follows, to the next heading. */
function headingBlock(lower: string, open: number): Block | undefined {
  let k = open;
  while (lower.charCodeAt(k) === 35) k++;
  const lineEnd = lower.indexOf('\n', k);
  const head = lower.slice(k, lineEnd === -1 ? Math.min(lower.length, k + 80) : Math.min(lineEnd, k + 80));
  if (!/\b(system|assistant|model|ai|admin)\b/.test(head)) return undefined;
  const next = lower.indexOf('##', k + head.length);
  return { start: k, end: next === -1 ? Math.min(lower.length, k + BLOCK_READ) : next };
}

function isTagCode(c: number): boolean {
  return (c >= 97 && c <= 122) || c === 45 || c === 95;
}

/** Words in [start, end) that order something. Words are sorted by start: a binary search finds the first. */
function carriesOrders(words: Words, start: number, end: number): boolean {
  let lo = 0;
  let hi = words.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((words.starts[mid] as number) < start) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < words.count && (words.starts[i] as number) < end; i++) {
    if (f2(words, i) & ORDERS) return true;
    if (f1(words, i) & (W.YOU | W.IGNORE | W.NEGATION | W.DON)) return true;
  }
  return false;
}
