// The index's scores against MiniSearch's BM25 with the same fields, boosts,
// prefix matching and stuffing weights: the reference a well-kept library
// gives, on random catalogs and queries, through additions, replacements and
// removals.
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import type { SluiceTool, Tool } from '@sluice/core';
import { ToolIndex, ToolSearchOptions, cappedWordsOf, wordsOf } from '@sluice/plugin-tool-search';

const limits = ToolSearchOptions.parse({}).index;
const FIELDS = ['name', 'title', 'description', 'params', 'upstream'] as const;
const BOOST = { name: 3, title: 2, description: 1, params: 0.6, upstream: 1.5 };

type Doc = Record<(typeof FIELDS)[number] | 'id', string>;

function weightOf(words: number, distinct: number): number {
  if (words < 24) return 1;
  return Math.max(0.1, Math.min(1, (2 * distinct) / words));
}

/** The same tool as MiniSearch indexes it: each field's words, capped, space-separated. */
function documentOf(tool: SluiceTool, maxRepeats: number): { doc: Doc; weight: number } {
  const d = tool.definition;
  const field = (text: string) => {
    const all = wordsOf(text);
    const kept = cappedWordsOf(all, maxRepeats);
    return { words: kept.words.join(' '), weight: weightOf(all.length, kept.distinct) };
  };
  const properties = (d.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
  const params = Object.entries(properties)
    .flatMap(([name, schema]) => [name, schema.description ?? ''])
    .join(' ');
  const description = field((d.description ?? '').slice(0, limits.maxFieldChars));
  const parameters = field(params.slice(0, limits.maxFieldChars));
  return {
    doc: {
      id: tool.name,
      name: field(tool.name).words,
      title: field(d.title ?? '').words,
      description: description.words,
      params: parameters.words,
      upstream: field(tool.source.kind === 'upstream' ? tool.source.upstream : '').words,
    },
    weight: Math.min(description.weight, parameters.weight),
  };
}

/**
 * MiniSearch over the same documents. Removal is its exact `remove` (its
 * `discard` counts a discarded tool's words until a vacuum, which the index
 * does not).
 */
class Reference {
  private readonly weights = new Map<string, number>();
  private readonly docs = new Map<string, Doc>();
  readonly search = new MiniSearch<Doc>({
    idField: 'id',
    fields: [...FIELDS],
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

  constructor(private readonly maxRepeats: number) {}

  put(tool: SluiceTool): void {
    this.remove(tool.name);
    const { doc, weight } = documentOf(tool, this.maxRepeats);
    this.search.add(doc);
    this.docs.set(tool.name, doc);
    this.weights.set(tool.name, weight);
  }

  remove(name: string): void {
    const doc = this.docs.get(name);
    if (doc === undefined) return;
    this.search.remove(doc);
    this.docs.delete(name);
  }

  scores(query: string): Map<string, number> {
    return new Map(this.search.search(query).map((r) => [String(r.id), r.score]));
  }
}

// A small vocabulary, so that words repeat across tools, prefixes overlap and stuffing happens.
const VOCABULARY = [
  'read',
  'reads',
  'reader',
  'file',
  'files',
  'filesystem',
  'create',
  'created',
  'creating',
  'issue',
  'issues',
  'github',
  'slack',
  'message',
  'messages',
  'send',
  'search',
  'searching',
  'weather',
  'forecast',
  'list',
  'listing',
  'pull',
  'request',
  'requests',
  'database',
  'query',
  'queries',
  'user',
  'users',
  'auth',
  'authorize',
  'authorization',
  'token',
  'the',
  'a',
  'of',
  'calendar',
  'event',
  'events',
];
const text = (max: number) =>
  fc.array(fc.constantFrom(...VOCABULARY), { maxLength: max }).map((words) => words.join(' '));
const toolArb = fc.record({
  name: fc.constantFrom('t1', 't2', 't3', 't4', 't5', 't6', 't7', 't8', 'read_file', 'create_issue'),
  title: text(3),
  description: fc.oneof(
    text(30),
    text(4).map((t) => `${t} `.repeat(20)),
  ),
  param: fc.constantFrom('path', 'query', 'userId', 'channel'),
  paramDescription: text(8),
  upstream: fc.constantFrom('github', 'slack', 'fs', ''),
});

function toTool(t: {
  name: string;
  title: string;
  description: string;
  param: string;
  paramDescription: string;
  upstream: string;
}): SluiceTool {
  const definition: Tool = {
    name: t.name,
    ...(t.title ? { title: t.title } : {}),
    description: t.description,
    inputSchema: { type: 'object', properties: { [t.param]: { type: 'string', description: t.paramDescription } } },
  };
  return {
    name: t.name,
    definition,
    policy: {},
    source: t.upstream
      ? { kind: 'upstream', upstream: t.upstream, originalName: t.name, trusted: false }
      : { kind: 'local' },
  };
}

const all = (): boolean => true;

describe('ToolIndex against MiniSearch', () => {
  it('gives every tool the score MiniSearch gives it, through puts, replacements and removals', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            toolArb.map((t) => ({ put: toTool(t) })),
            fc.constantFrom('t1', 't3', 'read_file').map((remove) => ({ remove })),
          ),
          {
            minLength: 1,
            maxLength: 25,
          },
        ),
        fc.array(text(5), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 3 }),
        (steps, queries, maxRepeats) => {
          const index = new ToolIndex({ ...limits, maxTermRepeats: maxRepeats });
          const reference = new Reference(maxRepeats);
          for (const step of steps) {
            if ('put' in step) {
              index.put(step.put);
              reference.put(step.put);
            } else {
              index.remove(step.remove);
              reference.remove(step.remove);
            }
          }
          expect(index.size).toBe(reference.search.documentCount);
          for (const query of queries) {
            const expected = reference.scores(query);
            const hits = index.query(query, 100, all);
            expect(new Set(hits.map((h) => h.name)), query).toEqual(new Set(expected.keys()));
            for (const hit of hits)
              expect(hit.score, `${query}: ${hit.name}`).toBeCloseTo(expected.get(hit.name) as number, 2);
            // Best first.
            for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  // With a cap of 1 no word counts twice; with 3, "path" counts twice in the parameters ("path: a path").
  it.each([limits.maxTermRepeats, 3])(
    'sweeps removed tools out and still scores as MiniSearch does (repeats capped at %i)',
    (maxRepeats) => {
      const index = new ToolIndex({ ...limits, maxTermRepeats: maxRepeats });
      const reference = new Reference(maxRepeats);
      const make = (i: number, words: string) =>
        toTool({
          name: `tool_${i}`,
          title: '',
          description: `${words} number${i % 7}`,
          param: 'path',
          paramDescription: 'a path',
          upstream: i % 2 ? 'github' : 'fs',
        });
      // Enough churn for several sweeps (one runs past 1,024 dead tools when they outnumber live ones),
      // ending with a round that removes every third tool, so that two thirds are left to score.
      for (let round = 0; round < 7; round++) {
        for (let i = 0; i < 1_500; i++) {
          const tool = make(i, VOCABULARY.slice((i + round) % 30, ((i + round) % 30) + 5).join(' '));
          index.put(tool);
          reference.put(tool);
        }
        for (let i = 0; i < 1_500; i += round % 2 ? 1 : 3) {
          index.remove(`tool_${i}`);
          reference.remove(`tool_${i}`);
        }
      }
      expect(index.size).toBe(reference.search.documentCount);
      expect(index.size).toBe(1_000);
      for (const query of ['read a file', 'create github issue', 'number3 calendar events', 'auth token', 'path']) {
        const expected = reference.scores(query);
        const hits = index.query(query, 10_000, all);
        expect(hits.length).toBe(expected.size);
        for (const hit of hits) expect(hit.score).toBeCloseTo(expected.get(hit.name) as number, 2);
      }
    },
  );
});
