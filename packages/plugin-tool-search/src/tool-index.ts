import MiniSearch from 'minisearch';
import type { SluiceTool, Tool } from '@sluice/core';
import { MetaKey } from '@sluice/core';
import type { ParsedToolSearchOptions } from './options.js';
import { cappedWordsOf, wordsOf } from './terms.js';

type IndexLimits = ParsedToolSearchOptions['index'];

/** What the index keeps of one tool: its searchable text, cut to the limits. */
interface ToolDocument {
  readonly id: string;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly params: string;
  readonly upstream: string;
}

/** One ranked match. */
export interface SearchHit {
  readonly name: string;
  readonly score: number;
}

const FIELDS = ['name', 'title', 'description', 'params', 'upstream'] as const;
/** A word in a tool's name says more about what it does than the same word deep in a parameter's description. */
const BOOST = { name: 3, title: 2, description: 1, params: 0.6, upstream: 1.5 };

/**
 * A BM25 index (MiniSearch) over the exposed tools' names, titles,
 * descriptions, parameter names and descriptions and upstream names. Kept in
 * step with the catalog one change at a time: a tool is added, replaced or
 * discarded without rebuilding the rest.
 */
export class ToolIndex {
  private readonly search: MiniSearch<ToolDocument>;
  /** Per tool, below 1 when its text is mostly repeats: see `repetitionWeight`. */
  private readonly weights = new Map<string, number>();

  constructor(private readonly limits: IndexLimits) {
    const cap = limits.maxTermRepeats;
    this.search = new MiniSearch<ToolDocument>({
      idField: 'id',
      fields: [...FIELDS],
      // Indexing: words capped per field, so repeating a word buys nothing past `maxTermRepeats`.
      tokenize: (text) => cappedWordsOf(text, cap),
      processTerm: (term) => term,
      searchOptions: {
        boost: BOOST,
        tokenize: (text) => wordsOf(text),
        processTerm: (term) => term,
        prefix: (term) => term.length >= 4,
        fuzzy: (term) => (term.length >= 6 ? 0.15 : false),
        combineWith: 'OR',
        boostDocument: (id) => this.weights.get(String(id)) ?? 1,
      },
    });
  }

  get size(): number {
    return this.search.documentCount;
  }

  has(name: string): boolean {
    return this.search.has(name);
  }

  /** Adds a tool, replacing the entry of the same name. */
  put(tool: SluiceTool): void {
    this.remove(tool.name);
    const document = documentOf(tool, this.limits);
    this.search.add(document);
    const weight = Math.min(repetitionWeight(document.description), repetitionWeight(document.params));
    if (weight < 1) this.weights.set(tool.name, weight);
  }

  remove(name: string): void {
    if (this.search.has(name)) this.search.discard(name);
    this.weights.delete(name);
  }

  /** Matches for `query`, best first, among the names `allowed` admits. */
  query(query: string, limit: number, allowed: (name: string) => boolean): SearchHit[] {
    const hits: SearchHit[] = [];
    for (const result of this.search.search(query, { filter: (r) => allowed(String(r.id)) })) {
      hits.push({ name: String(result.id), score: Math.round(result.score * 1000) / 1000 });
      if (hits.length >= limit) break;
    }
    return hits;
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
  const words = wordsOf(text);
  if (words.length < 24) return 1;
  const share = new Set(words).size / words.length;
  return Math.max(0.1, Math.min(1, 2 * share));
}

function documentOf(tool: SluiceTool, limits: IndexLimits): ToolDocument {
  const d = tool.definition;
  return {
    id: tool.name,
    name: tool.name,
    title: cut(d.title ?? d.annotations?.title ?? '', 256),
    description: cut(d.description ?? '', limits.maxFieldChars),
    params: cut(paramText(d, limits.maxParams), limits.maxFieldChars),
    upstream: tool.source.kind === 'upstream' ? tool.source.upstream : '',
  };
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
