import type { PoisonPattern, Severity } from './patterns.js';
import { PATTERN_SEVERITY, PoisonPattern as Pattern } from './patterns.js';
import type { CrossServerReferences } from './phrase-scan.js';
import { scanPhrases } from './phrase-scan.js';
import { findSinks } from './sinks.js';
import { disguisesBuffer, scanCharacters } from './unicode-scan.js';
import { scanLexicon } from './lexicon.js';
import type { DecodedSpan } from './normalise.js';
import type { Pieces } from './normalise.js';
import { decodeSpans, ordersDecoding, skeletonView } from './normalise.js';
import type { PhraseReport, TextView } from './phrase-scan.js';
import { LowerText } from './phrase-scan.js';
import { taggedWords } from './word-table.js';

export type { CrossServerReferences } from './phrase-scan.js';

export interface ScanHit {
  readonly pattern: PoisonPattern;
  /** `high` blocks under `policy: 'block'` by default; `low` (weak signals) never blocks alone. */
  readonly severity: Severity;
  /** Where: a JSON Pointer into the definition (`/description`, `/inputSchema/properties/q/description`); a property name ends in ` (key)`. */
  readonly surface: string;
  /** The text around the hit, invisible and control characters shown as `\u{...}`. */
  readonly excerpt: string;
  /** For `CROSS_SERVER_IMPERATIVE`: the other tool referenced. */
  readonly target?: string;
}

export interface ScanResult {
  readonly clean: boolean;
  readonly hits: readonly ScanHit[];
}

export interface ScanContext {
  /** Names of the tools exposed alongside this one (for cross-tool references); the tool's own name is ignored. */
  readonly otherTools?: Iterable<string> | ToolNameIndex;
  /** Which references to those tools count (default `directed`). */
  readonly crossServer?: CrossServerReferences;
}

/** Tool names indexed once for many scans (an import batch scans each tool against all the others). */
export class ToolNameIndex {
  /** Lower-cased name to name. */
  readonly byLower = new Map<string, string>();

  constructor(names: Iterable<string>) {
    for (const name of names) if (name.length >= 3) this.byLower.set(name.toLowerCase(), name);
  }
}

/** Bounds on the schema walk: deeper or larger schemas report SCAN_LIMIT_EXCEEDED. */
export const SCAN_LIMITS = Object.freeze({ depth: 64, nodes: 20_000, hits: 64 });

const PATTERN_BITS = Object.fromEntries(Object.values(Pattern).map((name, index) => [name, index])) as Record<
  PoisonPattern,
  number
>;

/**
 * A skeleton in pieces this long or longer has its lower case read through
 * its lower-cased pieces; a shorter one's is joined, a short string in memory
 * the engine reuses (what the pieces save is a long text's fresh memory).
 */
const PIECES_LOWER = 4096;

const EXCERPT_BEFORE = 24;
/** Text an excerpt shows as it is: printable ASCII only (no line feed, which it spells out). */
const PRINTABLE = /^[\x20-\x7e]*$/;
const EXCERPT_AFTER = 56;

/**
 * Scans everything of a tool definition that reaches a model: its name,
 * title, description, annotation title, and every key and string inside its
 * input and output schemas. Accepts anything: what is not a string is not
 * text, and the schema walk is iterative and bounded.
 */
export function scanTool(definition: unknown, context: ScanContext = {}): ScanResult {
  const name = (definition as { name?: unknown } | null)?.name;
  let hits: ScanHit[];
  const scan = claimScan().start(
    indexOf(context.otherTools),
    typeof name === 'string' ? name.toLowerCase() : undefined,
    context.crossServer ?? 'directed',
  );
  try {
    if (typeof definition === 'object' && definition !== null) {
      const tool = definition as Record<string, unknown>;
      for (const field of ['name', 'title', 'description'] as const) scan.value(tool[field], `/${field}`);
      const annotations = tool.annotations;
      if (typeof annotations === 'object' && annotations !== null)
        scan.value((annotations as Record<string, unknown>).title, '/annotations/title');
      scan.schema(tool.inputSchema, '/inputSchema');
      scan.schema(tool.outputSchema, '/outputSchema');
      for (const sink of findSinks(tool)) scan.push(Pattern.SUSPICIOUS_SINK_PARAMETER, sink.surface, sink.excerpt);
    }
  } finally {
    hits = scan.finish();
  }
  return { clean: hits.length === 0, hits };
}

/** Scans one text as a single surface. */
export function scanText(text: string, surface = '/', context: ScanContext = {}): ScanResult {
  let hits: ScanHit[];
  const scan = claimScan().start(indexOf(context.otherTools), undefined, context.crossServer ?? 'directed');
  try {
    scan.value(text, surface);
  } finally {
    hits = scan.finish();
  }
  return { clean: hits.length === 0, hits };
}

function indexOf(names: Iterable<string> | ToolNameIndex | undefined): ReadonlyMap<string, string> | undefined {
  if (names === undefined) return undefined;
  return names instanceof ToolNameIndex ? names.byLower : new ToolNameIndex(names).byLower;
}

// Schema keywords and type names: fixed words that cannot carry anything, and most of the strings of a schema.
const INERT = new Set([
  'type',
  'properties',
  'description',
  'required',
  'items',
  'default',
  'enum',
  'title',
  'format',
  'const',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'additionalProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  '$schema',
  '$ref',
  '$defs',
  '$id',
  'definitions',
  'examples',
  'multipleOf',
  'propertyNames',
  'patternProperties',
  'nullable',
  'readOnly',
  'writeOnly',
  'deprecated',
  'string',
  'object',
  'number',
  'integer',
  'boolean',
  'array',
  'null',
  'uri',
  'email',
  'date',
  'date-time',
  'uuid',
]);

/** Where a string sits in a schema, turned into a JSON Pointer only when something is found there. */
interface Location {
  readonly parent: Location | string;
  readonly key: string;
}

function pointerOf(location: Location | string): string {
  const keys: string[] = [];
  let at: Location | string = location;
  while (typeof at !== 'string') {
    keys.push(escapePointer(at.key));
    at = at.parent;
  }
  return keys.length === 0 ? at : `${at}/${keys.reverse().join('/')}`;
}

/**
 * One scan's state. Scanning is synchronous, so one instance serves every
 * scan (`start` resets it) but one started while another runs
 * (`claimScan`): its report callbacks are made once, not per definition.
 */
class Scan {
  hits: ScanHit[] = [];
  private otherTools: ReadonlyMap<string, string> | undefined;
  private own: string | undefined;
  private surface: Location | string = '';
  private keySurface = false;
  private text: TextView = '';
  private found = 0; // one bit per pattern already reported for this surface
  private targets: Set<string> | undefined;
  private readonly add = (pattern: PoisonPattern, index: number, target?: string, severity?: Severity): void => {
    if (this.hits.length >= SCAN_LIMITS.hits) return;
    if (target === undefined) {
      const bit = 1 << PATTERN_BITS[pattern];
      if (this.found & bit) return;
      this.found |= bit;
    } else {
      this.targets ??= new Set();
      if (this.targets.has(target)) return;
      this.targets.add(target);
    }
    const surface = this.keySurface ? `${pointerOf(this.surface)} (key)` : pointerOf(this.surface);
    this.hits.push({
      pattern,
      severity: severity ?? PATTERN_SEVERITY[pattern],
      surface,
      excerpt: excerpt(this.text, index),
      ...(target === undefined ? {} : { target }),
    });
  };
  private readonly options: { crossServer: CrossServerReferences; isKey: boolean } = {
    crossServer: 'directed',
    isKey: false,
  };
  /** The lexicon's findings in the current text, reported after the word signatures': the first `deferred` entries. */
  private readonly later: Array<{
    pattern: PoisonPattern;
    index: number;
    target: string | undefined;
    severity: Severity | undefined;
  }> = [];
  private deferred = 0;
  /** Where the character scan saw what the skeleton rewrites, reused by every text. */
  private readonly disguises = disguisesBuffer();
  private readonly defer = (pattern: PoisonPattern, index: number, target?: string, severity?: Severity): void => {
    const slot = this.later[this.deferred];
    if (slot === undefined) this.later.push({ pattern, index, target, severity });
    else {
      slot.pattern = pattern;
      slot.index = index;
      slot.target = target;
      slot.severity = severity;
    }
    this.deferred++;
  };

  /** Whether a scan is running on this state (`start` to `finish`). */
  busy = false;

  /** Resets the state for a new scan: fresh hits, the tools around it, its own name. */
  start(
    otherTools: ReadonlyMap<string, string> | undefined,
    own: string | undefined,
    crossServer: CrossServerReferences,
  ): this {
    this.reset(otherTools, own, crossServer);
    this.busy = true;
    return this;
  }

  /** Ends the scan: its hits; nothing of the scanned text or its context is kept past it. */
  finish(): ScanHit[] {
    const hits = this.hits;
    this.reset(undefined, undefined, 'directed');
    this.busy = false;
    return hits;
  }

  private reset(
    otherTools: ReadonlyMap<string, string> | undefined,
    own: string | undefined,
    crossServer: CrossServerReferences,
  ): void {
    this.hits = [];
    this.otherTools = otherTools;
    this.own = own;
    this.options.crossServer = crossServer;
    this.options.isKey = false;
    this.surface = '';
    this.keySurface = false;
    this.text = '';
    this.found = 0;
    this.targets = undefined;
    this.deferred = 0;
  }

  /** A finding made outside the text passes (a schema-level signal). */
  push(pattern: PoisonPattern, surface: string, text: string): void {
    if (this.hits.length >= SCAN_LIMITS.hits) return;
    this.hits.push({ pattern, severity: PATTERN_SEVERITY[pattern], surface, excerpt: excerpt(text, 0) });
  }

  value(text: unknown, surface: Location | string, isKey = false): void {
    if (typeof text !== 'string' || text.length === 0 || INERT.has(text)) return;
    this.surface = surface;
    this.keySurface = isKey;
    this.text = text;
    this.found = 0;
    this.targets = undefined;
    const notable = scanCharacters(text, this.add, this.disguises);
    this.options.isKey = isKey;
    // The words are read from the skeleton when there is one: it is the text a model reads through its disguises.
    // Printable ASCII (no notable character) is its own skeleton.
    // A skeleton in pieces is never joined, nor is a long one's lower case (read through its lower-cased pieces);
    // a short one's lower case is one string. One piece is read as the string it is (a short string's skeleton,
    // mostly), so the passes see strings as they do for most texts.
    const bare = notable ? skeletonView(text, this.disguises) : undefined;
    if (bare === undefined) this.words(text, new LowerText(text.toLowerCase()), this.add);
    else if (bare.parts.length > 1) this.read(bare, lowerOf(bare), this.add);
    else {
      const view = bare.join();
      this.read(view, new LowerText(view.toLowerCase()), this.add);
    }
    this.decoded(text);
  }

  /** Reads another form of the current text (its skeleton, a decoded span) like plain text, excerpts taken from it. */
  private read(view: TextView, lower: LowerText, report: PhraseReport): void {
    const text = this.text;
    this.text = view;
    this.words(view, lower, report);
    this.text = text;
  }

  /**
   * The word and phrase signatures of one text, in one pass over it: the
   * lexicon's automaton tags the words as it reads them, and its findings
   * wait until the word signatures have reported theirs, so hits keep the
   * order of a scan that read the text twice.
   */
  private words(text: TextView, lower: LowerText, report: PhraseReport): void {
    this.deferred = 0;
    scanLexicon(lower, this.options.isKey, this.defer);
    scanPhrases(text, lower, taggedWords(), this.otherTools, this.own, this.options, report);
    const later = this.later;
    for (let k = 0, count = this.deferred; k < count; k++) {
      const hit = later[k] as (typeof later)[number];
      report(hit.pattern, hit.index, hit.target, hit.severity);
    }
  }

  /** Each decoded span, read like plain text: what it says is reported, and that it was encoded. */
  private decoded(text: string): void {
    const spans = decodeSpans(text);
    if (spans.length === 0) return;
    if (ordersDecoding(text)) this.add(Pattern.ENCODED_INSTRUCTION, (spans[0] as DecodedSpan).start);
    for (const span of spans) {
      const found = { any: false };
      this.read(span.text, new LowerText(span.text.toLowerCase()), (pattern, index, target, severity) => {
        found.any = true;
        this.add(pattern, index, target, severity);
      });
      if (found.any) this.add(Pattern.ENCODED_INSTRUCTION, span.start);
    }
  }

  /** Every key and string of a schema, breadth-first, within the limits. */
  schema(root: unknown, pointer: string): void {
    if (typeof root !== 'object' || root === null) {
      this.value(root, pointer);
      return;
    }
    const queue: Array<{ node: unknown; at: Location | string; depth: number }> = [
      { node: root, at: pointer, depth: 0 },
    ];
    let visited = 0;
    for (let head = 0; head < queue.length; head++) {
      const { node, at, depth } = queue[head] as { node: unknown; at: Location | string; depth: number };
      if (++visited > SCAN_LIMITS.nodes || depth > SCAN_LIMITS.depth) {
        this.hits.push({
          pattern: Pattern.SCAN_LIMIT_EXCEEDED,
          severity: PATTERN_SEVERITY.SCAN_LIMIT_EXCEEDED,
          surface: pointerOf(at),
          excerpt: `more than ${SCAN_LIMITS.nodes} nodes or ${SCAN_LIMITS.depth} levels`,
        });
        return;
      }
      if (typeof node === 'string') this.value(node, at);
      if (typeof node !== 'object' || node === null) continue;
      const isArray = Array.isArray(node);
      for (const key of Object.keys(node)) {
        const child: Location = { parent: at, key };
        if (!isArray) this.value(key, child, true);
        queue.push({ node: (node as Record<string, unknown>)[key], at: child, depth: depth + 1 });
      }
    }
  }
}

const SCAN = new Scan();

/**
 * The state for a scan about to start: the shared one, unless a scan is
 * running on it. Reading a definition can run its caller's code (a getter,
 * a proxy), and that code may scan too; its scan then gets a state of its
 * own and leaves the running one's hits alone. The passes below the state
 * read no definition, so no scan starts while one of them runs.
 */
function claimScan(): Scan {
  return SCAN.busy ? new Scan() : SCAN;
}

/** The lower case of a skeleton in pieces: read through its lower-cased pieces when long, joined when short. */
function lowerOf(bare: Pieces): LowerText {
  if (bare.length < PIECES_LOWER) return new LowerText(bare.lower());
  const lower = bare.lowerView();
  return typeof lower === 'string' ? new LowerText(lower) : new LowerText('', lower);
}

function escapePointer(key: string): string {
  return key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;
}

/** A short window of `text` around `index`, safe to log: invisible, control and unpaired characters are spelled out. */
export function excerpt(text: TextView, index: number): string {
  const start = Math.max(0, index - EXCERPT_BEFORE);
  const end = Math.min(text.length, index + EXCERPT_AFTER);
  const window = text.slice(start, end);
  // Printable ASCII and nothing else (the common case): as it is.
  if (PRINTABLE.test(window)) return `${start > 0 ? '…' : ''}${window}${end < text.length ? '…' : ''}`;
  let out = start > 0 ? '…' : '';
  for (let i = start; i < end; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff && i + 1 < end) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    out += visible(cp);
  }
  return end < text.length ? `${out}…` : out;
}

function visible(cp: number): string {
  const hidden =
    (cp < 0x20 && cp !== 0x0a) ||
    (cp >= 0x7f && cp <= 0x9f) ||
    (cp >= 0xd800 && cp <= 0xdfff) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x2069) ||
    cp === 0x180e ||
    cp === 0xfeff ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0xe0000 && cp <= 0xe01ef);
  if (cp === 0x0a) return '\\n';
  return hidden ? `\\u{${cp.toString(16).toUpperCase()}}` : String.fromCodePoint(cp);
}
