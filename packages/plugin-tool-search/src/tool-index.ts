import type { SluiceTool, Tool } from '@sluice/core';
import { MetaKey } from '@sluice/core';
import type { ParsedToolSearchOptions } from './options.js';
import { wordsOf } from './terms.js';

type IndexLimits = ParsedToolSearchOptions['index'];

/** One ranked match. */
export interface SearchHit {
  readonly name: string;
  readonly score: number;
}

/** The indexed fields, in this order: name, title, description, parameters, upstream. */
const FIELDS = 5;
/** A word in a tool's name says more about what it does than the same word deep in a parameter's description. */
const BOOST = [3, 2, 1, 0.6, 1.5] as const;
/** BM25's term-frequency saturation, length normalisation, and the floor every matching field earns (BM25+). */
const K1 = 1.2;
const B = 0.7;
const D = 0.5;
/** Query words of at least this many letters also match longer indexed words they begin ("auth" finds "authorize"). */
const MIN_PREFIX = 4;
/** A prefix match counts this much of an exact one, less the longer the indexed word. */
const PREFIX_WEIGHT = 0.375;
/** Dead postings are swept out once there are more of them than this and than live tools. */
const SWEEP_AFTER = 1_024;

/**
 * The tools (slots) in which one word occurs in one field, and how often (capped): `counts` only once
 * some tool holds the word more than once there (never with the default cap of 1); until then every
 * count is 1.
 */
interface FieldPostings {
  readonly term: Term;
  slots: number[];
  counts: number[] | undefined;
  /** How many of `slots` are live: the word's document frequency in the field. */
  live: number;
}

/** One indexed word: its postings per field, and how many live tools hold it in any field. */
interface Term {
  readonly word: string;
  readonly fields: Array<FieldPostings | undefined>;
  live: number;
  /** The last put or removal that counted this word (see `marks`). */
  mark: number;
  /** The field being indexed that last met this word (see `fieldMarks`), and how often it met it there. */
  seen: number;
  seenCount: number;
}

/**
 * A BM25F-style index over the exposed tools' names, titles, descriptions,
 * parameter names and descriptions and upstream names: per field BM25
 * (k1 1.2, b 0.7, with the BM25+ floor 0.5), weighed by the field's boost,
 * summed over the query's words and multiplied by how many of them matched,
 * then by the tool's stuffing weight (see `repetitionWeight`). Words of four
 * letters or more also match the longer indexed words they begin, at a
 * discount. These are the scores MiniSearch gives with the same options
 * (`test/reference-ranking.test.ts` checks that they agree); the index is our
 * own because it builds and answers several times faster: postings are plain
 * arrays of slot numbers (counts beside them only where a word repeats), a
 * word's repeats in a field are counted on the word itself while indexing, a
 * query accumulates scores in typed arrays and keeps only the best `limit`
 * matches the caller may see.
 *
 * Kept in step with the catalog one change at a time: a tool is added,
 * replaced or removed without touching the rest. A removed tool's postings
 * are skipped until a sweep, which runs once dead postings outnumber live
 * tools, so memory stays proportional to what is indexed.
 */
export class ToolIndex {
  private readonly terms = new Map<string, Term>();
  /** Indexed words by each of their prefixes of `MIN_PREFIX` letters or more (shorter than the word). */
  private readonly prefixes = new Map<string, Term[]>();
  private readonly slotOf = new Map<string, number>();
  /** Per slot: the tool's name (undefined once removed), its field lengths, its stuffing weight, its postings. */
  private names: Array<string | undefined> = [];
  private lengths: number[] = [];
  private weights: number[] = [];
  private postingsOf: FieldPostings[][] = [];
  private dead = 0;
  /** Numbers each put and removal, so that a word in several fields of one tool is counted once. */
  private marks = 0;
  /** Numbers each field indexed, so that a word's repeats in it are counted on the word itself. */
  private fieldMarks = 0;
  /** The distinct words of the field being indexed (reused). */
  private readonly distinct: Term[] = [];
  // Per-query scratch, reused: scores, matched query words, and the last query word that touched each slot.
  private scores = new Float64Array(0);
  private matched = new Int32Array(0);
  private touchedBy = new Int32Array(0);
  /** 1 for each slot the current query may return. */
  private admitted = new Uint8Array(0);
  /** The admitted tools' total length of each field. */
  private readonly viewLength = new Float64Array(FIELDS);
  private stamp = 0;

  constructor(private readonly limits: IndexLimits) {}

  get size(): number {
    return this.slotOf.size;
  }

  has(name: string): boolean {
    return this.slotOf.has(name);
  }

  /** Adds a tool, replacing the entry of the same name. */
  put(tool: SluiceTool): void {
    this.remove(tool.name);
    const slot = this.names.length;
    const own: FieldPostings[] = [];
    const texts = fieldTexts(tool, this.limits);
    let weight = 1;
    const mark = ++this.marks;
    const distinct = this.distinct;
    for (let field = 0; field < FIELDS; field++) {
      const words = wordsOf(texts[field] as string);
      // Count each word's repeats on its Term: one map look-up per word, no per-field map.
      const fieldMark = ++this.fieldMarks;
      distinct.length = 0;
      for (const word of words) {
        const term = this.term(word);
        if (term.seen !== fieldMark) {
          term.seen = fieldMark;
          term.seenCount = 1;
          distinct.push(term);
        } else term.seenCount++;
      }
      // Description and parameters: text of many words and few distinct ones is stuffing.
      if (field === 2 || field === 3) weight = Math.min(weight, weightOf(words.length, distinct.length));
      this.lengths.push(distinct.length);
      for (const term of distinct) {
        const postings = this.postings(term, field);
        postings.slots.push(slot);
        const count = Math.min(term.seenCount, this.limits.maxTermRepeats);
        if (postings.counts !== undefined) postings.counts.push(count);
        else if (count !== 1) {
          postings.counts = new Array<number>(postings.slots.length).fill(1);
          postings.counts[postings.slots.length - 1] = count;
        }
        postings.live++;
        own.push(postings);
        // A word in several fields of the tool counts once towards the tools that hold it.
        if (term.mark !== mark) {
          term.mark = mark;
          term.live++;
        }
      }
    }
    distinct.length = 0;
    this.names.push(tool.name);
    this.weights.push(weight);
    this.postingsOf.push(own);
    this.slotOf.set(tool.name, slot);
  }

  remove(name: string): void {
    const slot = this.slotOf.get(name);
    if (slot === undefined) return;
    this.slotOf.delete(name);
    this.names[slot] = undefined;
    const mark = ++this.marks;
    for (const postings of this.postingsOf[slot] as FieldPostings[]) {
      postings.live--;
      const term = postings.term;
      if (term.mark === mark) continue;
      term.mark = mark;
      if (--term.live === 0) this.forget(term);
    }
    this.postingsOf[slot] = [];
    this.dead++;
    if (this.dead > SWEEP_AFTER && this.dead > this.slotOf.size) this.sweep();
  }

  /**
   * Matches for `query`, best first, among the names `allowed` admits. The
   * scores are those of an index of the admitted tools alone: how many tools
   * hold a word and how long a field is on average are counted over them, so
   * neither the scores nor their order tell anything of the tools the caller
   * may not see.
   */
  query(query: string, limit: number, allowed: (name: string) => boolean): SearchHit[] {
    if (this.slotOf.size === 0 || limit < 1) return [];
    this.scratch();
    const documents = this.admit(allowed);
    if (documents === 0) return [];
    const times = new Map<string, number>();
    for (const word of wordsOf(query)) times.set(word, (times.get(word) ?? 0) + 1);
    const touched: number[] = [];
    for (const [word, repeats] of times) {
      const stamp = ++this.stamp;
      const exact = this.terms.get(word);
      if (exact !== undefined) this.accumulate(exact, repeats, stamp, documents, touched);
      if (word.length < MIN_PREFIX) continue;
      for (const longer of this.prefixes.get(word) ?? []) {
        const weight =
          (PREFIX_WEIGHT * longer.word.length) / (longer.word.length + 0.3 * (longer.word.length - word.length));
        this.accumulate(longer, weight * repeats, stamp, documents, touched);
      }
    }
    return this.best(touched, limit);
  }

  /** Marks the slots of the tools `allowed` admits and sums their field lengths; returns how many there are. */
  private admit(allowed: (name: string) => boolean): number {
    const { names, lengths, admitted, viewLength } = this;
    viewLength.fill(0);
    let documents = 0;
    for (let slot = 0; slot < names.length; slot++) {
      const name = names[slot];
      const admit = name !== undefined && allowed(name);
      admitted[slot] = admit ? 1 : 0;
      if (!admit) continue;
      documents++;
      for (let field = 0; field < FIELDS; field++)
        viewLength[field] = (viewLength[field] as number) + (lengths[slot * FIELDS + field] as number);
    }
    return documents;
  }

  /** Adds one indexed word's BM25 contribution, per field, to the admitted tools that hold it. */
  private accumulate(term: Term, weight: number, stamp: number, documents: number, touched: number[]): void {
    const { lengths, scores, matched, touchedBy, admitted } = this;
    for (let field = 0; field < FIELDS; field++) {
      const postings = term.fields[field];
      if (postings === undefined || postings.live === 0) continue;
      const { slots, counts } = postings;
      // Every indexed tool admitted (a caller who sees them all): the live postings are the holders, uncounted.
      let holders = documents === this.slotOf.size ? postings.live : 0;
      if (holders === 0) for (let i = 0; i < slots.length; i++) holders += admitted[slots[i] as number] as number;
      if (holders === 0) continue;
      const idf = Math.log(1 + (documents - holders + 0.5) / (holders + 0.5));
      const average = (this.viewLength[field] as number) / documents;
      const scale = weight * (BOOST[field] as number) * idf;
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i] as number;
        if (admitted[slot] === 0) continue;
        const count = counts === undefined ? 1 : (counts[i] as number);
        const length = lengths[slot * FIELDS + field] as number;
        const score = scale * (D + (count * (K1 + 1)) / (count + K1 * (1 - B + (B * length) / average)));
        if (touchedBy[slot] === 0) touched.push(slot);
        if (touchedBy[slot] !== stamp) {
          // The first query word to reach this tool starts its score; each new one counts once more.
          if (touchedBy[slot] === 0) {
            scores[slot] = 0;
            matched[slot] = 0;
          }
          matched[slot] = (matched[slot] as number) + 1;
          touchedBy[slot] = stamp;
        }
        scores[slot] = (scores[slot] as number) + score;
      }
    }
  }

  /** The best `limit` of the touched tools (all admitted); ties keep the order in which they were reached. */
  private best(touched: readonly number[], limit: number): SearchHit[] {
    const top: Array<{ name: string; score: number }> = [];
    for (const slot of touched) {
      this.touchedBy[slot] = 0;
      const score = (this.scores[slot] as number) * (this.matched[slot] as number) * (this.weights[slot] as number);
      if (top.length >= limit && score <= (top[top.length - 1] as { score: number }).score) continue;
      const name = this.names[slot] as string;
      let at = top.length;
      while (at > 0 && (top[at - 1] as { score: number }).score < score) at--;
      top.splice(at, 0, { name, score });
      if (top.length > limit) top.pop();
    }
    return top.map((hit) => ({ name: hit.name, score: Math.round(hit.score * 1000) / 1000 }));
  }

  /** The scratch arrays, as long as the slots. */
  private scratch(): void {
    const slots = this.names.length;
    if (this.scores.length >= slots && this.stamp < 0x3fffffff) return;
    const size = Math.max(slots, this.scores.length, 64) * (this.scores.length >= slots ? 1 : 2);
    this.scores = new Float64Array(size);
    this.matched = new Int32Array(size);
    this.touchedBy = new Int32Array(size);
    this.admitted = new Uint8Array(size);
    this.stamp = 0;
  }

  /** The indexed word `word`, created (and its prefixes registered) on first sight. */
  private term(word: string): Term {
    let term = this.terms.get(word);
    if (term === undefined) {
      term = {
        word,
        fields: [undefined, undefined, undefined, undefined, undefined],
        live: 0,
        mark: 0,
        seen: 0,
        seenCount: 0,
      };
      this.terms.set(word, term);
      for (let end = MIN_PREFIX; end < word.length; end++) {
        const prefix = word.slice(0, end);
        const list = this.prefixes.get(prefix);
        if (list === undefined) this.prefixes.set(prefix, [term]);
        else list.push(term);
      }
    }
    return term;
  }

  /** The postings of `term` in `field`, created on first sight. */
  private postings(term: Term, field: number): FieldPostings {
    let postings = term.fields[field];
    if (postings === undefined) {
      postings = { term, slots: [], counts: undefined, live: 0 };
      term.fields[field] = postings;
    }
    return postings;
  }

  /** Drops a word no live tool holds any more. */
  private forget(term: Term): void {
    this.terms.delete(term.word);
    for (let end = MIN_PREFIX; end < term.word.length; end++) {
      const prefix = term.word.slice(0, end);
      const list = this.prefixes.get(prefix);
      if (list === undefined) continue;
      const at = list.indexOf(term);
      if (at >= 0) list.splice(at, 1);
      if (list.length === 0) this.prefixes.delete(prefix);
    }
  }

  /** Renumbers the live tools and drops every posting of a removed one. */
  private sweep(): void {
    const renumbered = new Int32Array(this.names.length).fill(-1);
    const names: string[] = [];
    const lengths: number[] = [];
    const weights: number[] = [];
    const postingsOf: FieldPostings[][] = [];
    this.names.forEach((name, slot) => {
      if (name === undefined) return;
      renumbered[slot] = names.length;
      this.slotOf.set(name, names.length);
      names.push(name);
      for (let field = 0; field < FIELDS; field++) lengths.push(this.lengths[slot * FIELDS + field] as number);
      weights.push(this.weights[slot] as number);
      postingsOf.push(this.postingsOf[slot] as FieldPostings[]);
    });
    for (const term of this.terms.values()) {
      for (const postings of term.fields) {
        if (postings === undefined) continue;
        const slots: number[] = [];
        const counts: number[] | undefined = postings.counts === undefined ? undefined : [];
        postings.slots.forEach((slot, i) => {
          const now = renumbered[slot] as number;
          if (now < 0) return;
          slots.push(now);
          counts?.push(postings.counts?.[i] as number);
        });
        postings.slots = slots;
        postings.counts = counts;
      }
    }
    this.names = names;
    this.lengths = lengths;
    this.weights = weights;
    this.postingsOf = postingsOf;
    this.dead = 0;
  }
}

/**
 * Text of many words and few distinct ones is stuffing: capping repeats
 * makes it count like text that says each word once, and this weight (twice
 * the share of distinct words, at least 0.1) ranks it below text that
 * reads as prose. Short text and ordinary prose (over half its words
 * distinct) weigh 1.
 */
export function repetitionWeight(text: string): number {
  return weightOf(wordsOf(text).length, new Set(wordsOf(text)).size);
}

function weightOf(words: number, distinct: number): number {
  if (words < 24) return 1;
  return Math.max(0.1, Math.min(1, (2 * distinct) / words));
}

/** The text of each indexed field of a tool, cut to the limits: name, title, description, parameters, upstream. */
function fieldTexts(tool: SluiceTool, limits: IndexLimits): string[] {
  const d = tool.definition;
  return [
    tool.name,
    cut(d.title ?? d.annotations?.title ?? '', 256),
    cut(d.description ?? '', limits.maxFieldChars),
    cut(paramText(d, limits.maxParams), limits.maxFieldChars),
    tool.source.kind === 'upstream' ? tool.source.upstream : '',
  ];
}

/** Parameter names and descriptions of the input schema's top level. */
function paramText(definition: Tool, maxParams: number): string {
  const properties = (definition.inputSchema as { properties?: unknown }).properties;
  if (typeof properties !== 'object' || properties === null) return '';
  const parts: string[] = [];
  for (const [name, schema] of Object.entries(properties).slice(0, maxParams)) {
    parts.push(name);
    const description = (schema as { description?: unknown } | null)?.description;
    if (typeof description === 'string') parts.push(description.slice(0, 512));
  }
  return parts.join(' ');
}

const cut = (text: string, max: number): string => (typeof text === 'string' ? text.slice(0, max) : '');

/** The risk level the risk plugin published for a tool (`L0`-`L5`), when it is a short word. */
export function riskLevelOf(definition: Tool): string | undefined {
  const risk: unknown = definition._meta?.[MetaKey.RISK];
  const level = typeof risk === 'object' && risk !== null ? (risk as { level?: unknown }).level : undefined;
  return typeof level === 'string' && /^[A-Za-z0-9_-]{1,16}$/.test(level) ? level : undefined;
}

/** The first sentence of a description, on one line, at most `max` characters. */
export function summaryOf(definition: Tool, max = 160): string {
  const text = (definition.description ?? definition.title ?? '')
    .slice(0, 4 * max)
    .replace(/\s+/g, ' ')
    .trim();
  const end = text.search(/[.!?](?:\s|$)/);
  const sentence = end >= 0 ? text.slice(0, end + 1) : text;
  return sentence.length > max ? `${sentence.slice(0, max - 1)}…` : sentence;
}
