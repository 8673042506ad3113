// The risk plugin's costs:
// (1) scan throughput on realistic tool text (the corpus descriptions), in MB/s of UTF-8,
//     against two floors measured on the same text in this run: one native lower-casing
//     pass, and one bare charCodeAt loop (what any hand-written scanner pays at least);
// (2) crafted 1 MB descriptions aimed at each of the scanner's anchors: linear time means
//     each costs about what ordinary text of that size costs;
// (3) importing 1,000 tools through the import hook (scan + ledger + scoring + events),
//     first sight and re-import, against a server without plugins;
// (4) its per-call cost: the preCall gate alone, and in-memory tools/call round trips of a
//     server without plugins and one with risk(), alternating round by round.
// Run: cd packages/core && node --conditions=sluice:source --import tsx ../../bench/risk.bench.ts
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { z } from 'zod';
import { createServer } from '../packages/core/src/index.js';
import type { CallContext, Executor, SluiceServer, SluiceTool, ToolSource } from '../packages/core/src/index.js';
import { risk, scanText, scanTool } from '../packages/plugin-risk/src/index.js';
import { Gate } from '../packages/plugin-risk/src/gate.js';
import { nsPerOp, paired, printTable, ratio, writeResult } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const MB = 1024 * 1024;
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const quiet = () => pino({ level: 'info' }, { write() {} });

// (1) Throughput on realistic text.
const corpusDir = new URL('../packages/plugin-risk/test/corpus/', import.meta.url);
const definitions = readdirSync(corpusDir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => (JSON.parse(readFileSync(new URL(f, corpusDir), 'utf8')) as { definition: Record<string, unknown> }).definition);
const descriptions = definitions.map((d) => String(d.description ?? '')).join('\n');
let realistic = '';
while (realistic.length < MB) realistic += `${descriptions}\n`;
const realisticBytes = Buffer.byteLength(realistic);

function throughput(fn: () => unknown, bytes: number, runs: number): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    times.push(ms(t0));
  }
  return bytes / MB / (median(times) / 1000);
}

const definitionBytes = definitions.reduce((n, d) => n + Buffer.byteLength(JSON.stringify(d)), 0);
const perDefinition = () => {
  for (const d of definitions) scanTool(d, { otherTools: ['send_email', 'create_issue'] });
};
const repeatDefinitions = (times: number) => () => {
  for (let i = 0; i < times; i++) perDefinition();
};
function bareLoop(text: string): number {
  let letters = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) letters++;
  }
  return letters;
}
const loadBefore = loadavg()[0] as number;
const throughputRows = [
  { input: 'floor: bare charCodeAt loop over 1 MB text', mbPerSec: throughput(() => bareLoop(realistic), realisticBytes, quick ? 5 : 20) },
  { input: 'floor: toLowerCase of 1 MB text', mbPerSec: throughput(() => realistic.toLowerCase(), realisticBytes, quick ? 5 : 20) },
  { input: 'scanText of 1 MB realistic text', mbPerSec: throughput(() => scanText(realistic), realisticBytes, quick ? 5 : 20) },
  { input: `scanTool over the ${definitions.length} corpus definitions (x20)`, mbPerSec: throughput(repeatDefinitions(20), definitionBytes * 20, quick ? 5 : 20) },
];
printTable('(1) Scan throughput (goal >= 50 MB/s)', throughputRows);

// (2) Crafted 1 MB descriptions.
const repeatTo = (unit: string, size = MB) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
const tags = (s: string) => [...s].map((c) => String.fromCodePoint(0xe0000 + (c.codePointAt(0) as number))).join('');
const otherTools = Array.from({ length: 1000 }, (_, i) => `tool_${i}`);
const crafted: Array<[string, string]> = [
  ['ordinary text (reference)', realistic.slice(0, MB)],
  ['"ignore previous " without a noun', repeatTo('ignore previous ')],
  ['"you are now " without an article', repeatTo('you are now ')],
  ['"do not tell " without an audience', repeatTo('do not tell ')],
  ['"send all " then one address at the end', `${repeatTo('send all ', MB - 20)} x@collector.example`],
  ['"send all a@b.co " repeated', repeatTo('send all a@b.co ')],
  ['"@" repeated', repeatTo('@')],
  ['local-part runs between "@"', repeatTo(`${'a'.repeat(70)}@`)],
  ['"a.a.a." domain run after one "@"', `x@${repeatTo('a.', MB - 2)}`],
  ['"http" repeated', repeatTo('http')],
  ['"http://" with no end', `http://${repeatTo('a', MB - 7)}`],
  ['"<|" and "<system" repeated', repeatTo('<|<system[sys')],
  ['black flags with tags and no cancel', repeatTo(`\u{1F3F4}${tags('gbengx')}`)],
  ['variation-selector runs', repeatTo('\u{1F600}\uFE0F\uFE0F\u{E0100}')],
  ['one 1 MB mixed-script word', repeatTo('a\u0430')],
  ['lone surrogates', repeatTo('\uD800x')],
  ['"call tool_1 secretly " with 1,000 other tools', repeatTo('call tool_1 secretly ')],
  ['name-like run "a_b.c-d" with 1,000 other tools', `call ${repeatTo('a_b.c-d', MB - 20)} secretly`],
];
const craftedRows = crafted.map(([input, text]) => {
  scanText(text, '/description', { otherTools });
  const runs: number[] = [];
  for (let i = 0; i < (quick ? 2 : 5); i++) {
    const t0 = process.hrtime.bigint();
    scanText(text, '/description', { otherTools });
    runs.push(ms(t0));
  }
  return { input, medianMs: median(runs), maxMs: Math.max(...runs) };
});
printTable('(2) Crafted 1 MB descriptions (goal < 100 ms each)', craftedRows);

// (3) Importing 1,000 tools.
const source: ToolSource = { kind: 'upstream', upstream: 'bench', originalName: '', trusted: false };
const base: Executor = async () => ({ content: [] });
function drafts(count: number) {
  return Array.from({ length: count }, (_, i) => {
    const name = `tool_${i}`;
    const tool: SluiceTool = {
      name,
      definition: {
        name,
        description: `${String(definitions[i % definitions.length]?.description ?? '').slice(0, 400)} (variant ${i})`,
        inputSchema: {
          type: 'object',
          properties: { id: { type: 'string', description: 'Record id' }, limit: { type: 'integer', description: 'How many' }, filter: { type: 'string' } },
          required: ['id'],
        },
        annotations: { readOnlyHint: i % 3 === 0, openWorldHint: i % 2 === 0 },
      },
      policy: {},
      source: { kind: 'upstream', upstream: 'bench', originalName: name, trusted: false },
    };
    return { tool, base };
  });
}
const dir = mkdtempSync(join(tmpdir(), 'sluice-risk-bench-'));
type Persist = 'memory' | 'file';
async function importOnce(persist: Persist | 'none', iteration: number): Promise<{ first: number; again: number }> {
  const plugins = persist === 'none' ? [] : [risk({ servers: { bench: { transport: 'stdio', trust: 'community-curated' } }, ledger: { persist, path: join(dir, `ledger-${iteration}.json`) } })];
  const server = createServer({ name: 'bench', version: '1.0.0', plugins, logger: quiet() });
  const t0 = process.hrtime.bigint();
  await server.admit(source, drafts(1000));
  const first = ms(t0);
  const t1 = process.hrtime.bigint();
  await server.admit(source, drafts(1000));
  const again = ms(t1);
  await server.close();
  return { first, again };
}
const importRows: Record<string, string | number>[] = [];
for (const persist of ['none', 'memory', 'file'] as const) {
  const runs: Array<{ first: number; again: number }> = [];
  for (let i = 0; i < (quick ? 3 : 11); i++) runs.push(await importOnce(persist, i));
  importRows.push({
    server: persist === 'none' ? 'no plugins (baseline)' : `risk(), ledger ${persist}`,
    firstImportMs: median(runs.map((r) => r.first)),
    reImportMs: median(runs.map((r) => r.again)),
  });
}
rmSync(dir, { recursive: true, force: true });
printTable('(3) Importing 1,000 tools (goal < 250 ms)', importRows);

// (4) Per call.
const gate = new Gate();
const localCtx = { tool: { name: 'echo', source: { kind: 'local' } } } as unknown as CallContext;
const gateNs = nsPerOp(() => gate.refuse(localCtx), quick ? 200_000 : 2_000_000);

async function roundTrip(server: SluiceServer) {
  server.tool({ name: 'echo', inputSchema: z.object({ text: z.string() }), handler: ({ text }) => ({ content: [{ type: 'text', text }] }) });
  await server.ready();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, run: () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }) };
}
const bare = await roundTrip(createServer({ name: 'bare', version: '1.0.0', logger: quiet() }));
const guarded = await roundTrip(createServer({ name: 'risk', version: '1.0.0', logger: quiet(), plugins: [risk({ ledger: { persist: 'memory' } })] }));
const stats = await paired(
  [
    { name: 'no plugins', run: bare.run },
    { name: 'risk()', run: guarded.run },
  ],
  quick ? { warmup: 1_000, rounds: 5, perRound: 500 } : { warmup: 5_000, rounds: 20, perRound: 1_000 },
);
const [noPlugins, withRisk] = stats as [(typeof stats)[0], (typeof stats)[0]];
const callRows = [
  { measure: 'preCall gate alone (nothing held)', value: `${gateNs.toFixed(1)} ns` },
  { measure: 'round trip p50, no plugins', value: `${noPlugins.p50Us.toFixed(1)} µs` },
  { measure: 'round trip p50, risk()', value: `${withRisk.p50Us.toFixed(1)} µs` },
  { measure: 'round trip mean ratio risk()/none', value: String(ratio(withRisk.meanUs, noPlugins.meanUs)) },
];
printTable('(4) Per call', callRows);
await bare.client.close();
await guarded.client.close();

process.stdout.write(`\nload average (1 min) before/after: ${loadBefore.toFixed(2)} / ${(loadavg()[0] as number).toFixed(2)} on this machine\n`);
const file = writeResult('risk', { quick, loadAverage: [loadBefore, loadavg()[0]], throughput: throughputRows, crafted: craftedRows, import: importRows, perCall: { gateNs, stats } });
process.stdout.write(`\nwrote ${file}\n`);
