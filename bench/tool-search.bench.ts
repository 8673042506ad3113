// Tool search, measured:
// (1) quality: recall@5 and MRR of the index over a labelled set of natural-language queries
//     (tool-search/queries.txt) against the real tool definitions of public MCP servers
//     (tool-search/catalog.json, each server citing its source);
// (2) token saving: the size of a tools/list result with and without the plugin, at 10, 100 and
//     1,000 tools, in estimated tokens (see TOKENS below);
// (3) speed: indexing 10,000 tools, a query at 10,000 tools (p50/p99: the index alone, and a whole
//     search_tools call through the server, caller filtering included), heap per indexed tool; each
//     wall-clock time beside the CPU time the process used (steadier on a shared machine).
// Run: node --expose-gc --conditions=sluice:source --import tsx bench/tool-search.bench.ts
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createServer } from '../packages/core/src/index.js';
import type { CallToolResult, SluiceTool, Tool } from '../packages/core/src/index.js';
import { ToolIndex, ToolSearchOptions, toolSearch } from '../packages/plugin-tool-search/src/index.js';
import { printTable, writeResult } from './lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.env.BENCH_QUICK === '1';
const silent = pino({ level: 'silent' });

interface CatalogTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Tool['inputSchema'];
  outputSchema?: Tool['outputSchema'];
}
interface Catalog {
  servers: { server: string; source: Record<string, string>; tools: CatalogTool[] }[];
}

const catalog = JSON.parse(readFileSync(join(here, 'tool-search/catalog.json'), 'utf8')) as Catalog;
/** Every catalog tool as a gateway exposes it: `<server>_<tool>`, imported from the upstream `<server>`. */
const exposed: SluiceTool[] = catalog.servers.flatMap((s) =>
  s.tools.map((t) => {
    const name = `${s.server}_${t.name}`;
    return {
      name,
      definition: { ...t, name },
      policy: {},
      source: { kind: 'upstream' as const, upstream: s.server, originalName: t.name, trusted: false },
    };
  }),
);

const queries = readFileSync(join(here, 'tool-search/queries.txt'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'))
  .map((line) => {
    const [query, answers] = line.split(' => ') as [string, string];
    return { query, relevant: new Set(answers.split(',').map((a) => a.trim())) };
  });

const limits = ToolSearchOptions.parse({}).index;
const all = (): boolean => true;

// (1) Quality.
const index = new ToolIndex(limits);
for (const tool of exposed) index.put(tool);
let found5 = 0;
let reciprocal = 0;
const misses: string[] = [];
for (const { query, relevant } of queries) {
  const ranked = index.query(query, 50, all).map((h) => h.name);
  const rank = ranked.findIndex((name) => relevant.has(name)) + 1;
  if (rank >= 1 && rank <= 5) found5++;
  else misses.push(`${query} -> ${ranked.slice(0, 3).join(', ')}`);
  if (rank >= 1) reciprocal += 1 / rank;
}
const quality = {
  tools: exposed.length,
  servers: catalog.servers.length,
  queries: queries.length,
  recallAt5: round(found5 / queries.length, 3),
  mrr: round(reciprocal / queries.length, 3),
};
printTable('Search quality (labelled queries over real MCP tool definitions)', [quality]);
if (process.env.BENCH_VERBOSE === '1') for (const miss of misses) console.log(`  miss: ${miss}`);

// (2) Token saving.
/**
 * TOKENS: an estimate, not a model's tokenizer (none ships with the workspace): the JSON text of the
 * tools/list result at 4 characters per token, the usual rule of thumb for English text with
 * cl100k/o200k-class BPE tokenizers; JSON punctuation and schema keys tokenize somewhat denser, so the
 * real counts run higher, and the ratio between the two columns holds either way.
 */
const tokens = (value: unknown): number => Math.ceil(JSON.stringify(value).length / 4);
/** `n` tools drawn from the catalog in order, repeated with a suffix past its end. */
const sample = (n: number): SluiceTool[] =>
  Array.from({ length: n }, (_, i) => {
    const base = exposed[i % exposed.length]!;
    const name = i < exposed.length ? base.name : `${base.name}_${Math.floor(i / exposed.length)}`;
    return { ...base, name, definition: { ...base.definition, name } };
  });

async function listed(tools: readonly SluiceTool[], withSearch: boolean): Promise<Tool[]> {
  const server = createServer({
    name: 'bench',
    version: '1',
    logger: silent,
    plugins: withSearch ? [toolSearch()] : [],
  });
  for (const tool of tools)
    server.tool({
      name: tool.name,
      ...(tool.definition.title ? { title: tool.definition.title } : {}),
      description: tool.definition.description ?? '',
      inputSchema: tool.definition.inputSchema,
      ...(tool.definition.outputSchema ? { outputSchema: tool.definition.outputSchema } : {}),
      handler: () => ({ content: [] }),
    });
  await server.ready();
  const list = server.listTools();
  await server.close();
  return list;
}

const tokenRows = [];
for (const n of [10, 100, 1_000]) {
  const tools = sample(n);
  const without = tokens({ tools: await listed(tools, false) });
  const withPlugin = tokens({ tools: await listed(tools, true) });
  tokenRows.push({ tools: n, without, with: withPlugin, saved: `${Math.round((1 - withPlugin / without) * 100)}%` });
}
printTable('tools/list size in estimated tokens (JSON characters / 4)', tokenRows);

// (3) Speed and memory at 10,000 tools.
const TEN_K = 10_000;
const big = sample(TEN_K);
const gc = (globalThis as { gc?: () => void }).gc;
const heap = (): number => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};
/** CPU time (user + system) this process used since `c0`, in ms: steadier than the wall clock on a shared machine. */
const cpuMs = (c0: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(c0);
  return (used.user + used.system) / 1000;
};
const indexRuns: number[] = [];
const indexCpu: number[] = [];
for (let run = 0; run < (quick ? 2 : 5); run++) {
  const bigIndex = new ToolIndex(limits);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const tool of big) bigIndex.put(tool);
  indexRuns.push(performance.now() - t0);
  indexCpu.push(cpuMs(c0));
}
const before = heap();
const kept = new ToolIndex(limits);
for (const tool of big) kept.put(tool);
const bytesPerTool = Math.round((heap() - before) / TEN_K);

const queryTimes: number[] = [];
const queryCpu0 = process.cpuUsage();
for (let round = 0; round < (quick ? 2 : 10); round++) {
  for (const { query } of queries) {
    const t0 = process.hrtime.bigint();
    kept.query(query, 8, all);
    queryTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}
const queryCpuMean = cpuMs(queryCpu0) / queryTimes.length;

// A whole search_tools call through the server: the caller's tools/list filter, the index, the result.
const server = createServer({ name: 'bench', version: '1', logger: silent, plugins: [toolSearch()] });
for (const tool of big)
  server.tool({
    name: tool.name,
    description: tool.definition.description ?? '',
    inputSchema: tool.definition.inputSchema,
    handler: () => ({ content: [] }),
  });
await server.ready();
const check = (result: CallToolResult): CallToolResult => {
  if (result.isError) throw new Error(JSON.stringify(result));
  return result;
};
for (const { query } of queries.slice(0, 20)) check(await server.call('search_tools', { query }));
const callTimes: number[] = [];
for (let round = 0; round < (quick ? 1 : 3); round++) {
  for (const { query } of queries) {
    const t0 = process.hrtime.bigint();
    check(await server.call('search_tools', { query }));
    callTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}
await server.close();

// Wall-clock figures are taken on whatever load the machine carries (see loadAverage); the CPU figures
// count only this process's time, so they move much less with it.
const speed = {
  tools: TEN_K,
  indexMs: round(median(indexRuns), 1),
  indexCpuMs: round(median(indexCpu), 1),
  queryP50Ms: round(percentile(queryTimes, 0.5), 3),
  queryP99Ms: round(percentile(queryTimes, 0.99), 3),
  queryCpuMeanMs: round(queryCpuMean, 3),
  callP50Ms: round(percentile(callTimes, 0.5), 3),
  callP99Ms: round(percentile(callTimes, 0.99), 3),
  heapBytesPerTool: bytesPerTool,
  // The machine's load while it ran: timings on a shared machine scale with it.
  loadAverage: round(os.loadavg()[0] ?? 0, 1),
  cpus: os.cpus().length,
};
printTable(
  "Speed and memory at 10,000 tools (index alone; callP50: a whole search_tools call; *Ms wall clock under the load shown, *CpuMs this process's CPU time)",
  [speed],
);

const file = writeResult('tool-search', {
  quality,
  tokens: { estimate: 'JSON characters / 4', rows: tokenRows },
  speed,
  goals: { recallAt5: 0.9, indexMs: 250, queryP50Ms: 1 },
});
console.log(`\nwrote ${file}`);

function median(values: number[]): number {
  return percentile(values, 0.5);
}
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}
function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
