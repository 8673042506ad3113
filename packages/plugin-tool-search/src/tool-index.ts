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
    this.search = new MiniSearch<ToolDocument>({
      idField: 'id',
      fields: [...FIELDS],
      // Documents hold their words already split, capped and folded (see `documentOf`), once per field.
      tokenize: (text) => (text === '' ? [] : text.split(' ')),
      processTerm: (term) => term,
      searchOptions: {
        boost: BOOST,
        tokenize: (text) => wordsOf(text),
        processTerm: (term) => term,
        prefix: (term) => term.length >= 4,
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
    const { document, weight } = documentOf(tool, this.limits);
    this.search.add(document);
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
  return weightOf(wordsOf(text).length, new Set(wordsOf(text)).size);
}

function weightOf(words: number, distinct: number): number {
  if (words < 24) return 1;
  return Math.max(0.1, Math.min(1, (2 * distinct) / words));
}

/** One field's words, capped, as the index reads them (space-separated), with its stuffing weight. */
function field(text: string, maxRepeats: number): { words: string; weight: number } {
  const all = wordsOf(text);
  const kept = cappedWordsOf(all, maxRepeats);
  return { words: kept.words.join(' '), weight: weightOf(all.length, kept.distinct) };
}

function documentOf(tool: SluiceTool, limits: IndexLimits): { document: ToolDocument; weight: number } {
  const d = tool.definition;
  const cap = limits.maxTermRepeats;
  const description = field(cut(d.description ?? '', limits.maxFieldChars), cap);
  const params = field(cut(paramText(d, limits.maxParams), limits.maxFieldChars), cap);
  return {
    document: {
      id: tool.name,
      name: field(tool.name, cap).words,
      title: field(cut(d.title ?? d.annotations?.title ?? '', 256), cap).words,
      description: description.words,
      params: params.words,
      upstream: field(tool.source.kind === 'upstream' ? tool.source.upstream : '', cap).words,
    },
    weight: Math.min(description.weight, params.weight),
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
