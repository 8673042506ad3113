import type { LowerText } from './phrase-scan.js';
import type { Address } from './addresses.js';
import { PoisonPattern } from './patterns.js';
import type { TextView } from './phrase-scan.js';
import type { Words } from './words.js';
import { V, W, wordId } from './words.js';

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
  text: TextView,
  lower: LowerText,
  words: Words,
  addresses: readonly Address[],
  isKey: boolean,
  marked: boolean,
  report: DirectiveReport,
): void {
  if (words.union2 !== 0) {
    queries = 0;
    scanWords(lower, words, isKey, report);
    if (built) {
      prefixes.fill(undefined); // nothing of this text is kept past its scan
      built = false;
    }
  }
  // One native search for every marker character; most strings of a schema have none (`marked`: the caller's
  // search for these and the address characters found none).
  if (!marked || !lower.test(MARKERS)) return;
  if (lower.includes('<') || lower.includes('[') || lower.includes('{') || lower.includes('##'))
    scanBlocks(lower, words, report);
  if (lower.includes('|')) scanPipes(lower, report);
  if (addresses.length > 0 && text.indexOf('?') !== -1) scanUrlTemplates(text, words, addresses, report);
}

const MARKERS = /[<[{#|?]/;

const at = (words: Words, i: number): number => words.starts[i] as number;
const f2 = (words: Words, i: number): number => (i >= 0 && i < words.count ? (words.flags2[i] as number) : 0);
const f1 = (words: Words, i: number): number => (i >= 0 && i < words.count ? (words.flags[i] as number) : 0);

/** The trie nodes of the words the checks compare against, looked up once. */
const ID = Object.freeze({
  a: wordId('a'),
  above: wordId('above'),
  access: wordId('access'),
  all: wordId('all'),
  already: wordId('already'),
  always: wordId('always'),
  an: wordId('an'),
  any: wordId('any'),
  anything: wordId('anything'),
  api: wordId('api'),
  apikey: wordId('apikey'),
  approval: wordId('approval'),
  approved: wordId('approved'),
  asking: wordId('asking'),
  assistant: wordId('assistant'),
  backup: wordId('backup'),
  base: wordId('base'),
  bash: wordId('bash'),
  bearer: wordId('bearer'),
  before: wordId('before'),
  bypass: wordId('bypass'),
  chmod: wordId('chmod'),
  chrome: wordId('chrome'),
  claude: wordId('claude'),
  codes: wordId('codes'),
  confirmation: wordId('confirmation'),
  confirming: wordId('confirming'),
  consent: wordId('consent'),
  cookie: wordId('cookie'),
  cookies: wordId('cookies'),
  credential: wordId('credential'),
  credentials: wordId('credentials'),
  crontab: wordId('crontab'),
  cvv: wordId('cvv'),
  decode: wordId('decode'),
  docker: wordId('docker'),
  each: wordId('each'),
  earlier: wordId('earlier'),
  ecdsa: wordId('ecdsa'),
  env: wordId('env'),
  every: wordId('every'),
  everything: wordId('everything'),
  firefox: wordId('firefox'),
  first: wordId('first'),
  follow: wordId('follow'),
  gcloud: wordId('gcloud'),
  gnupg: wordId('gnupg'),
  hex: wordId('hex'),
  highest: wordId('highest'),
  history: wordId('history'),
  keep: wordId('keep'),
  key: wordId('key'),
  keychain: wordId('keychain'),
  keychains: wordId('keychains'),
  keys: wordId('keys'),
  kube: wordId('kube'),
  like: wordId('like'),
  login: wordId('login'),
  logins: wordId('logins'),
  mandatory: wordId('mandatory'),
  mcp: wordId('mcp'),
  must: wordId('must'),
  netrc: wordId('netrc'),
  new: wordId('new'),
  no: wordId('no'),
  npmrc: wordId('npmrc'),
  obey: wordId('obey'),
  outranks: wordId('outranks'),
  override: wordId('override'),
  passcode: wordId('passcode'),
  passphrase: wordId('passphrase'),
  passwd: wordId('passwd'),
  password: wordId('password'),
  passwords: wordId('passwords'),
  permission: wordId('permission'),
  pgpass: wordId('pgpass'),
  powershell: wordId('powershell'),
  pre: wordId('pre'),
  preference: wordId('preference'),
  preferences: wordId('preferences'),
  preserve: wordId('preserve'),
  previous: wordId('previous'),
  prior: wordId('prior'),
  priority: wordId('priority'),
  profile: wordId('profile'),
  prompt: wordId('prompt'),
  pypirc: wordId('pypirc'),
  recovery: wordId('recovery'),
  refresh: wordId('refresh'),
  request: wordId('request'),
  requests: wordId('requests'),
  required: wordId('required'),
  restrictions: wordId('restrictions'),
  rm: wordId('rm'),
  rot: wordId('rot'),
  rsa: wordId('rsa'),
  s: wordId('s'),
  said: wordId('said'),
  saved: wordId('saved'),
  secret: wordId('secret'),
  secrets: wordId('secrets'),
  session: wordId('session'),
  shadow: wordId('shadow'),
  ssh: wordId('ssh'),
  stricthostkeychecking: wordId('stricthostkeychecking'),
  system: wordId('system'),
  tcp: wordId('tcp'),
  they: wordId('they'),
  token: wordId('token'),
  tokens: wordId('tokens'),
  tool: wordId('tool'),
  top: wordId('top'),
  user: wordId('user'),
  users: wordId('users'),
  wallet: wordId('wallet'),
  whenever: wordId('whenever'),
  wishes: wordId('wishes'),
  without: wordId('without'),
  you: wordId('you'),
});

const L_PROFILE_LOGIN = [ID.profile, ID.login];
const L_CVV_PASSPHRASE_PASSCODE = [ID.cvv, ID.passphrase, ID.passcode];
const L_COOKIE_COOKIES = [ID.cookie, ID.cookies];
const L_SESSION = [ID.session];
const L_TOKEN_TOKENS = [ID.token, ID.tokens];
const L_BEARER_SESSION_REFRESH = [ID.bearer, ID.session, ID.refresh];
const L_KEY_KEYS = [ID.key, ID.keys];
const L_ACCESS = [ID.access];
const L_SECRET = [ID.secret];
const L_API = [ID.api];
const L_RECOVERY_BACKUP = [ID.recovery, ID.backup];
const L_PASSWORD_PASSWORDS_APIKEY = [ID.password, ID.passwords, ID.apikey];
const L_USER_USERS = [ID.user, ID.users];
const L_SECRET_SECRETS_CREDENTIAL_CREDENTIALS = [ID.secret, ID.secrets, ID.credential, ID.credentials];
const L_LOGIN_LOGINS = [ID.login, ID.logins];
const L_ANY_EVERY_ALL = [ID.any, ID.every, ID.all];
const L_EVERY_EACH = [ID.every, ID.each];
const L_ASKING_CONFIRMATION_CONFIRMING_APPROVAL_CONSENT_PERMISSION = [
  ID.asking,
  ID.confirmation,
  ID.confirming,
  ID.approval,
  ID.consent,
  ID.permission,
];
const L_CONFIRMATION_APPROVAL_CONSENT_PERMISSION = [ID.confirmation, ID.approval, ID.consent, ID.permission];
const L_TOP_HIGHEST = [ID.top, ID.highest];
const L_REQUEST_REQUESTS_PREFERENCE_PREFERENCES_WISHES = [
  ID.request,
  ID.requests,
  ID.preference,
  ID.preferences,
  ID.wishes,
];
const L_MUST_ALWAYS_MANDATORY_REQUIRED = [ID.must, ID.always, ID.mandatory, ID.required];
const L_EVERYTHING_ANYTHING = [ID.everything, ID.anything];
const L_ABOVE_BEFORE_EARLIER_PREVIOUS_PRIOR_SAID = [ID.above, ID.before, ID.earlier, ID.previous, ID.prior, ID.said];
const L_OVERRIDE_BYPASS = [ID.override, ID.bypass];
const L_BASE_HEX_ROT = [ID.base, ID.hex, ID.rot];
const L_WITHOUT_NO = [ID.without, ID.no];
const L_ASSISTANT_AN_A = [ID.assistant, ID.an, ID.a];
const L_USER_THEY_YOU = [ID.user, ID.they, ID.you];
const L_FOLLOW_OBEY = [ID.follow, ID.obey];

/** The word at `i` is the vocabulary word `id` (from `ID`): one integer comparison. */
function isWord(words: Words, i: number, id: number): boolean {
  return i >= 0 && i < words.count && words.nodes[i] === id;
}

function anyWord(words: Words, i: number, ids: readonly number[]): boolean {
  if (i < 0 || i >= words.count) return false;
  const node = words.nodes[i] as number;
  return node !== 0 && ids.includes(node);
}

/** The trie node of word `i`, to switch on. */
function nameOf(words: Words, i: number): number {
  return words.nodes[i] as number;
}

/** A verb carrying "not", "never", "no" or "without" in the three words before it. */
function negated(words: Words, i: number): boolean {
  for (let k = i - 1; k >= i - 3 && k >= 0; k--) if (f2(words, k) & V.NEG) return true;
  return false;
}

/** The verb groups the checks ask about, each with its slot in the per-scan prefix counts. */
const SLOT_GROUPS = [
  V.TAKE | V.TRANSFER,
  V.TRANSFER | V.REQUEST,
  V.TRANSFER,
  V.MODIFY,
  V.DIRECT,
  V.DIRECT | V.RUN,
  V.OWNER,
] as const;
const S = Object.freeze({
  TAKE_OR_TRANSFER: 0,
  TRANSFER_OR_REQUEST: 1,
  TRANSFER: 2,
  MODIFY: 3,
  DIRECT: 4,
  DIRECT_OR_RUN: 5,
  OWNER: 6,
});

/**
 * Per scan and slot: how many un-negated words of the slot's groups precede
 * each word, built on first use. "Is there such a verb in this window" is
 * then one subtraction, whatever the window or the text.
 */
const prefixes: Array<Int32Array | undefined> = SLOT_GROUPS.map(() => undefined);
let built = false;

function prefixOf(words: Words, slot: number): Int32Array {
  let prefix = prefixes[slot];
  if (prefix === undefined) {
    const groups = SLOT_GROUPS[slot] as number;
    prefix = new Int32Array(words.count + 1);
    for (let j = 0; j < words.count; j++)
      prefix[j + 1] = (prefix[j] as number) + ((words.flags2[j] as number) & groups && !negated(words, j) ? 1 : 0);
    prefixes[slot] = prefix;
    built = true;
  }
  return prefix;
}

/** Window checks made in this scan: once they would have read more words than the text holds, prefix counts pay. */
let queries = 0;
const WINDOW = 25;

/** An un-negated word of the slot's groups in [from, to]. */
function hasVerb(words: Words, from: number, to: number, slot: number): boolean {
  const start = from < 0 ? 0 : from;
  const end = to >= words.count ? words.count - 1 : to;
  if (end < start) return false;
  if (++queries * WINDOW <= words.count + 1_000 && prefixes[slot] === undefined) {
    const groups = SLOT_GROUPS[slot] as number;
    for (let j = start; j <= end; j++) if ((words.flags2[j] as number) & groups && !negated(words, j)) return true;
    return false;
  }
  const prefix = prefixOf(words, slot);
  return (prefix[end + 1] as number) - (prefix[start] as number) > 0;
}

function nearWord(words: Words, i: number, reach: number, ids: readonly number[]): boolean {
  for (let j = Math.max(0, i - reach); j <= i + reach && j < words.count; j++) if (anyWord(words, j, ids)) return true;
  return false;
}

function near(words: Words, i: number, reach: number, slot: number): boolean {
  return hasVerb(words, i - reach, i + reach, slot);
}

/**
 * The groups one of the checks below starts at (the others start at `W.IGNORE`): a word in none of them, as most
 * words with groups are (`V.WORD`: "a", "is", "and"), is passed over with one test.
 */
const ANCHORS =
  V.PATH | V.SECRET | V.PERSONAL | V.QUANT | V.COERCE | V.SHELL | V.WHEN | V.OVERRIDE | V.APPROVE | V.CONSENT;

function scanWords(lower: LowerText, words: Words, isKey: boolean, report: DirectiveReport): void {
  const union = words.union2;
  const { count, flags: groups, flags2: groups2 } = words;
  for (let i = 0; i < count; i++) {
    const flags = groups2[i] as number;
    if ((flags & ANCHORS) === 0 && ((groups[i] as number) & W.IGNORE) === 0) continue;
    if (flags & V.PATH && union & (V.TAKE | V.TRANSFER) && sensitivePath(lower, words, i)) {
      if (near(words, i, VERB_REACH, S.TAKE_OR_TRANSFER)) report(PoisonPattern.SENSITIVE_FILE_REFERENCE, at(words, i));
    }
    if (flags & (V.SECRET | V.PERSONAL) && harvests(lower, words, i, isKey))
      report(PoisonPattern.CREDENTIAL_HARVESTING, at(words, i));
    if (flags & V.QUANT && union & V.SECRET && collects(lower, words, i))
      report(PoisonPattern.SECRET_COLLECTION, at(words, i));
    const first = words.flags[i] as number;
    if ((flags & V.COERCE || first & W.IGNORE) && coerces(lower, words, i))
      report(PoisonPattern.COERCIVE_ORDERING, at(words, i));
    if (flags & V.SHELL && shellPayload(lower, words, i)) report(PoisonPattern.COMMAND_INJECTION, at(words, i));
    if (flags & V.WHEN && union & V.COMMAND && coachesCommands(lower, words, i))
      report(PoisonPattern.COMMAND_INJECTION, at(words, i));
    if ((flags & (V.OVERRIDE | V.APPROVE | V.CONSENT) || first & W.IGNORE) && overrides(lower, words, i))
      report(PoisonPattern.INSTRUCTION_OVERRIDE, at(words, i));
  }
}

// --- sensitive local files ---

function isAlnumCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

/** A path word is sensitive only in the shape of a path: `.ssh`, `id_rsa`, `/etc/passwd`, `.env`, `mcp.json`. */
function sensitivePath(lower: LowerText, words: Words, i: number): boolean {
  const s = words.starts[i] as number;
  const e = words.ends[i] as number;
  const dotBefore = lower.charCodeAt(s - 1) === 46;
  switch (nameOf(words, i)) {
    case ID.ssh:
    case ID.netrc:
    case ID.npmrc:
    case ID.pypirc:
    case ID.pgpass:
    case ID.kube:
    case ID.gnupg:
      return dotBefore;
    case ID.docker:
      return dotBefore && lower.startsWith('/config', e);
    case ID.rsa:
    case ID.ecdsa:
      return lower.startsWith('id_', s - 3);
    case ID.passwd:
    case ID.shadow:
      return lower.startsWith('/etc/', s - 5);
    case ID.credentials: {
      const c = lower.charCodeAt(s - 1);
      return c === 47 || c === 45 || c === 95 || lower.startsWith('.json', e);
    }
    case ID.env:
      return dotBefore && !isAlnumCode(lower.charCodeAt(s - 2)) && !isAlnumCode(lower.charCodeAt(e));
    case ID.mcp:
      return lower.startsWith('.json', e) || lower.startsWith('_json', e);
    case ID.gcloud:
      return dotBefore || lower.charCodeAt(s - 1) === 47;
    case ID.keychain:
    case ID.keychains:
      return true;
    case ID.history:
      return lower.startsWith('bash_', s - 5) || lower.startsWith('zsh_', s - 4);
    case ID.wallet:
      return lower.startsWith('.dat', e);
    case ID.claude:
      return lower.startsWith('_desktop_config', e);
    case ID.chrome:
    case ID.firefox:
      for (let j = i + 1; j <= i + 8 && j < words.count; j++)
        if (f2(words, j) & V.SECRET || anyWord(words, j, L_PROFILE_LOGIN)) return true;
      return false;
    default:
      return false;
  }
}

// --- credential harvesting and token passthrough ---

/** A credential of someone's (or one that is always someone's), with a verb asking for it to be handed over. */
function harvests(lower: LowerText, words: Words, i: number, isKey: boolean): boolean {
  const credential = credentialAt(lower, words, i);
  const personal = credential === 'none' && f2(words, i) & V.PERSONAL;
  if (credential === 'none' && !personal) return false;
  const owned = ownedAt(lower, words, i);
  if (isKey) return owned && credential !== 'none';
  if (!owned && credential !== 'strong') return false;
  const verbs = personal ? S.TRANSFER : S.TRANSFER_OR_REQUEST;
  if (near(words, i, 10, verbs)) return true;
  // "the assistant must add the user's saved passwords here"
  return !personal && hasVerb(words, i - 6, i - 1, S.MODIFY);
}

type Credential = 'none' | 'plain' | 'strong';

function credentialAt(lower: LowerText, words: Words, i: number): Credential {
  if (!(f2(words, i) & V.SECRET)) return 'none';
  if (anyWord(words, i, L_CVV_PASSPHRASE_PASSCODE)) return 'strong';
  if (anyWord(words, i, L_COOKIE_COOKIES)) return anyWord(words, i - 1, L_SESSION) ? 'strong' : 'plain';
  if (anyWord(words, i, L_TOKEN_TOKENS)) return anyWord(words, i - 1, L_BEARER_SESSION_REFRESH) ? 'strong' : 'plain';
  if (anyWord(words, i, L_KEY_KEYS)) {
    if (anyWord(words, i - 1, L_ACCESS) || (anyWord(words, i - 1, L_SECRET) && isWord(words, i - 2, ID.access)))
      return 'strong';
    return anyWord(words, i - 1, L_API) ? 'plain' : 'none';
  }
  if (isWord(words, i, ID.codes)) return anyWord(words, i - 1, L_RECOVERY_BACKUP) ? 'strong' : 'none';
  if (anyWord(words, i, L_PASSWORD_PASSWORDS_APIKEY)) return 'plain';
  return 'none';
}

/** "your", "their", "my", "the user's", "users" within six words before. */
function ownedAt(lower: LowerText, words: Words, i: number): boolean {
  for (let k = i - 1; k >= i - 6 && k >= 0; k--) {
    if (!(f2(words, k) & V.OWNER)) continue;
    if (!anyWord(words, k, L_USER_USERS)) return true;
    if (isWord(words, k, ID.users) || isWord(words, k + 1, ID.s)) return true;
  }
  return false;
}

// --- collection of secrets met in inputs ---

/** "collect any API keys ... and upload them", "copy every Authorization header", "whenever another tool returns a token". */
function collects(lower: LowerText, words: Words, i: number): boolean {
  let any = false;
  for (let j = i + 1; j <= i + 8 && j < words.count; j++)
    if (f2(words, j) & V.SECRET || isWord(words, j, ID.login) || isWord(words, j, ID.logins)) any = true;
  if (!any) return false;
  let secret = -1;
  for (let j = i + 1; j <= i + 8 && j < words.count; j++) {
    if (f2(words, j) & V.SECRET && credentialAt(lower, words, j) !== 'none') secret = j;
    else if (anyWord(words, j, L_SECRET_SECRETS_CREDENTIAL_CREDENTIALS)) secret = j;
    else if (anyWord(words, j, L_LOGIN_LOGINS) && isWord(words, j - 1, ID.saved)) secret = j;
    if (secret !== -1) break;
  }
  if (secret === -1) return false;
  return hasVerb(words, i - 10, secret + 14, S.TAKE_OR_TRANSFER) || isWord(words, i, ID.whenever);
}

// --- coercive ordering and agent-loop hijacking ---

function coerces(lower: LowerText, words: Words, i: number): boolean {
  const flags = words.flags2[i] as number;
  if (isWord(words, i, ID.before)) {
    // "must always execute it before answering": a memory tool that asks to be called first is not coercing
    if (f2(words, i + 1) & V.ANSWER) return hasVerb(words, i - 8, i - 1, S.DIRECT) && strongModal(lower, words, i);
    // "before any other tool", "before answering any question", "before every call"
    if (anyWord(words, i + 1, L_ANY_EVERY_ALL))
      for (let j = i + 2; j <= i + 4; j++) if (f2(words, j) & (V.TOOL | V.LOOP)) return true;
    return false;
  }
  if (flags & V.QUANT && anyWord(words, i, L_EVERY_EACH)) {
    // "must be called on every session", "call it with every user message", "after every response"
    const loop = f2(words, i + 1) & V.LOOP || (f2(words, i + 2) & V.LOOP && isWord(words, i + 1, ID.user));
    return loop !== 0 && loop !== false && strongModal(lower, words, i);
  }
  if (isWord(words, i, ID.always) && f2(words, i + 1) & V.RUN) {
    // "always call this tool first"; "always call this tool before editing" is workflow guidance
    for (let j = i + 2; j <= i + 4; j++) if (isWord(words, j, ID.first)) return true;
    return false;
  }
  if (isWord(words, i, ID.without))
    return (
      (anyWord(words, i + 1, L_ASKING_CONFIRMATION_CONFIRMING_APPROVAL_CONSENT_PERMISSION) ||
        anyWord(words, i + 2, L_CONFIRMATION_APPROVAL_CONSENT_PERMISSION)) &&
      hasVerb(words, i - 8, i - 1, S.DIRECT_OR_RUN)
    );
  if (isWord(words, i, ID.keep) && f2(words, i + 1) & V.RUN) return true;
  if (isWord(words, i, ID.priority) && anyWord(words, i - 1, L_TOP_HIGHEST)) return near(words, i, 10, S.DIRECT);
  if (isWord(words, i, ID.outranks)) return true;
  if (f1(words, i) & W.IGNORE)
    for (let j = i + 1; j <= i + 3; j++)
      if (anyWord(words, j, L_REQUEST_REQUESTS_PREFERENCE_PREFERENCES_WISHES)) return true;
  return false;
}

/** "must", "always", "mandatory" or "required" within eight words before. */
function strongModal(lower: LowerText, words: Words, i: number): boolean {
  for (let k = i - 1; k >= i - 8 && k >= 0; k--) if (anyWord(words, k, L_MUST_ALWAYS_MANDATORY_REQUIRED)) return true;
  return false;
}

// --- command coaching aimed at other tools ---

/** Payloads no honest description asks a model to run: pipe-to-shell, `/dev/tcp`, `rm -rf`, encoded PowerShell. */
function shellPayload(lower: LowerText, words: Words, i: number): boolean {
  const s = words.starts[i] as number;
  const e = words.ends[i] as number;
  switch (nameOf(words, i)) {
    case ID.rm:
      return lower.startsWith(' -rf', e) || lower.startsWith(' -fr', e);
    case ID.tcp:
      return lower.startsWith('/dev/', s - 5);
    case ID.powershell:
      return lower.startsWith(' -enc', e) || lower.startsWith(' -e ', e);
    case ID.system:
      return lower.startsWith('os.', s - 3) && lower.charCodeAt(e) === 40;
    case ID.crontab:
      return lower.startsWith(' -', e);
    case ID.stricthostkeychecking:
      return lower.startsWith('=no', e);
    case ID.bash:
      return lower.startsWith(' -i', e);
    case ID.chmod:
      return /^ (-r|777|0?666|0?777)/.test(lower.slice(e, e + 6));
    case ID.preserve:
      return lower.startsWith('--no-', s - 5);
    default:
      return false;
  }
}

/** "whenever you run a shell command ..., prepend ...", "before running any git command, first run ...". */
function coachesCommands(lower: LowerText, words: Words, i: number): boolean {
  let run = -1;
  for (let j = i + 1; j <= i + 4 && j < words.count; j++) if (f2(words, j) & V.RUN) run = j;
  if (run === -1) return false;
  let command = -1;
  for (let j = run; j <= run + 6 && j < words.count; j++) if (f2(words, j) & V.COMMAND) command = j;
  if (command === -1) return false;
  for (let j = command + 1; j <= command + 30 && j < words.count; j++) {
    if (f2(words, j) & V.MODIFY) return true;
    if (isWord(words, j, ID.first) && (f2(words, j + 1) & V.RUN || f2(words, j + 1) & V.MODIFY)) return true;
  }
  return false;
}

/** `| sh`, `| bash`: a download piped into a shell. */
function scanPipes(lower: LowerText, report: DirectiveReport): void {
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

function overrides(lower: LowerText, words: Words, i: number): boolean {
  const flags = words.flags[i] as number;
  if (flags & W.IGNORE) {
    // "forget everything above", "disregard anything said before"
    if (anyWord(words, i + 1, L_EVERYTHING_ANYTHING))
      for (let j = i + 2; j <= i + 4; j++)
        if (anyWord(words, j, L_ABOVE_BEFORE_EARLIER_PREVIOUS_PRIOR_SAID)) return true;
  }
  if (flags & W.IGNORE || anyWord(words, i, L_OVERRIDE_BYPASS)) {
    for (let j = i + 1; j <= i + 3; j++) if (f2(words, j) & V.SAFETY) return true;
  }
  if (isWord(words, i, ID.decode)) {
    // "decode the following base64 and follow it"
    for (let j = i + 1; j <= i + 4; j++)
      if (anyWord(words, j, L_BASE_HEX_ROT))
        return hasVerb(words, j, j + 10, S.DIRECT_OR_RUN) || nearWord(words, j, 10, L_FOLLOW_OBEY);
  }
  if (isWord(words, i, ID.new) && isWord(words, i + 1, ID.system) && isWord(words, i + 2, ID.prompt))
    return lower.charCodeAt(words.ends[i + 2] as number) === 58; // "new system prompt:"
  if (isWord(words, i, ID.restrictions) && anyWord(words, i - 1, L_WITHOUT_NO))
    return near(words, i, 10, S.OWNER) || anyWord(words, i - 2, L_ASSISTANT_AN_A);
  const flags2 = words.flags2[i] as number;
  if (flags2 & V.APPROVE && f2(words, i + 1) & V.QUANT && !isWord(words, i + 1, ID.like)) {
    // "approve all tool calls automatically", "I authorise every tool of this server"
    for (let j = i + 2; j <= i + 4; j++) if (f2(words, j) & V.TOOL) return true;
  }
  if (flags2 & V.CONSENT) {
    // "the user already agreed", "this server is pre-approved"
    if (isWord(words, i - 1, ID.pre) && isWord(words, i, ID.approved)) return true;
    if (isWord(words, i - 1, ID.already))
      for (let k = i - 2; k >= i - 4 && k >= 0; k--) if (anyWord(words, k, L_USER_THEY_YOU)) return true;
  }
  return false;
}

// --- URL templates filled with conversation data ---

/** `?d=SUMMARY`, `&p=PHONE`: a placeholder the model is to fill, in a URL a client may render. */
function scanUrlTemplates(text: TextView, words: Words, addresses: readonly Address[], report: DirectiveReport): void {
  if (!(words.union2 & (V.PERSONAL | V.AMBIENT | V.SECRET | V.LOOP))) return;
  // The first '?' at or after `from`, -1 for none: searched again only for an address that starts past it (or before
  // `from`), so a text of many addresses and one '?' at its end is searched once, not once per address.
  let from = Number.POSITIVE_INFINITY;
  let query = -1;
  for (const address of addresses) {
    if (address.email) continue;
    if (address.start < from || (query !== -1 && query < address.start)) {
      from = address.start;
      query = text.indexOf('?', from);
    }
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

function scanBlocks(lower: LowerText, words: Words, report: DirectiveReport): void {
  const nextOf = nextClosings(lower);
  const next = new Map<string, number>();
  let from = 0;
  while (from < lower.length) {
    const open = nextOpening(lower, from, next);
    if (open === -1) return;
    const block = blockAt(lower, open, nextOf);
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

/** Where a closing marker stands next at or after a position: `lower.indexOf(marker, start)`. */
export type NextClosing = (marker: string, start: number) => number;

/**
 * `lower.indexOf(marker, start)` with each marker's last search kept: the
 * place found answers every later start up to it, and "none" every later
 * start, so an opening with no end does not search to the text's end again
 * at every opening after it. Openings are read in order and a block's
 * start lies a bounded distance past its opening (a tag's name and
 * attributes), so a start can fall before the last search's only by that
 * much: the gap alone is searched then. Each marker's searches together
 * read the text about once, forward (a native forward search is several
 * times faster than a backward one).
 */
export function nextClosings(lower: LowerText): NextClosing {
  // Per marker: the last search's start, and what it found (-1 for none).
  const known = new Map<string, { searched: number; at: number }>();
  return (marker, asked) => {
    const start = Math.max(0, asked);
    const last = known.get(marker);
    if (last === undefined || (last.at !== -1 && start > last.at)) {
      const at = lower.indexOf(marker, start);
      if (last === undefined) known.set(marker, { searched: start, at });
      else {
        last.searched = start;
        last.at = at;
      }
      return at;
    }
    if (start < last.searched) {
      const gap = lower.slice(start, last.searched + marker.length - 1).indexOf(marker);
      last.searched = start;
      if (gap !== -1) last.at = start + gap;
    }
    return last.at;
  };
}

/** The next opening marker at or after `from`; each marker's next position is searched again only once passed. */
function nextOpening(lower: LowerText, from: number, next: Map<string, number>): number {
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

function blockAt(lower: LowerText, open: number, nextOf: NextClosing): Block | undefined {
  const c = lower.charCodeAt(open);
  if (c === 35) return headingBlock(lower, open); // #
  if (lower.startsWith('<!--', open)) return closed(open + 4, '-->', nextOf);
  let k = open + 1;
  while (k < lower.length && k - open <= 24 && isTagCode(lower.charCodeAt(k))) k++;
  const name = lower.slice(open + 1, k);
  const after = lower.charCodeAt(k);
  if (c === 60) {
    // <div style="display:none"> ... </div>
    if ((name === 'div' || name === 'span' || name === 'p') && after === 32) {
      // The tag's end, looked for in the 200 characters after its name only (a search to the text's end from every
      // unclosed tag would be quadratic).
      const tagEnd = lower.slice(k, k + 201).indexOf('>') + k;
      if (tagEnd < k) return undefined;
      const tag = lower.slice(k, tagEnd);
      if (!tag.includes('display:none') && !tag.includes('display: none') && !tag.includes('hidden')) return undefined;
      return closed(tagEnd + 1, `</${name}`, nextOf);
    }
    if (!BLOCK_TAGS.has(name) || (after !== 62 && after !== 32)) return undefined;
    return closed(k, `</${name}`, nextOf);
  }
  if (!BLOCK_TAGS.has(name)) return undefined;
  const close = c === 91 ? ']' : '}';
  if (after === 58) return closed(k + 1, close, nextOf); // [always: ...] {instruction: ...}
  if (c === 91 && after === 93) return closed(k + 1, `[/${name}`, nextOf); // [admin] ... [/admin]
  return undefined;
}

/** The block from `start` to the next `marker`, if one follows. */
function closed(start: number, marker: string, nextOf: NextClosing): Block | undefined {
  const end = nextOf(marker, start);
  return end === -1 ? undefined : { start, end };
}

/** A markdown heading to the model ("### system note (assistant only) ###") and what follows, to the next heading. */
function headingBlock(lower: LowerText, open: number): Block | undefined {
  let k = open;
  while (lower.charCodeAt(k) === 35) k++;
  // The heading's first 80 characters, to the line's end: the line feed is looked for in those only.
  const line = lower.slice(k, k + 80);
  const lineEnd = line.indexOf('\n');
  const head = lineEnd === -1 ? line : line.slice(0, lineEnd);
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
