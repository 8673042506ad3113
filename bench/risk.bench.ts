// The risk plugin's costs:
// (1) scan throughput on realistic tool text (the corpus descriptions, in one text and in 32 KB texts, and its clean
//     half alone: the text real servers publish), in MB/s of UTF-8,
//     against two floors measured on the same text in this run: one native lower-casing
//     pass, and one bare charCodeAt loop (what any hand-written scanner pays at least);
// (2) crafted 1 MB descriptions aimed at each of the scanner's anchors: linear time means
//     each costs about what ordinary text of that size costs;
// (3) importing 1,000 tools through the import hook (scan + ledger + scoring + events),
//     first sight and re-import, against a server without plugins;
// (4) its per-call cost: the preCall holds check alone; in-memory tools/call round trips of a
//     local tool on a server without plugins and with risk() configured four ways (defaults,
//     which log no events for local tools; events for every tool at a level the logger
//     drops; events written; a shared ledger store, fresh), alternating round by round; and
//     a call of an imported (in-process) tool without and with its call events written;
// (5) the approval half: sealing and checking a 2026-07-28 state, and a 2025-11-25
//     elicitation round trip (approved) against the same call unasked.
// (1), (2) and (2b) time the scan as an install runs it: the built package (`pnpm bench` builds first);
// BENCH_SOURCE=1 times the TypeScript sources through tsx instead, whose transform costs each closure made and
// keeps the top-level constants that the build also keeps (scripts/bundle-consts.mjs).
// Run: cd packages/core && node --conditions=sluice:source --import tsx ../../bench/risk.bench.ts
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { z } from 'zod';
import { MemoryStore, createServer } from '../packages/core/src/index.js';
import { TestServer } from '../packages/testing/src/index.js';
import type { CallContext, Executor, SluiceServer, SluiceTool, ToolSource } from '../packages/core/src/index.js';
import { risk } from '../packages/plugin-risk/src/index.js';
import type * as RiskPackage from '../packages/plugin-risk/src/index.js';
import type { RiskOptions } from '../packages/plugin-risk/src/index.js';
import { CallHolds } from '../packages/plugin-risk/src/ledger/holds.js';
import { RequestStateCodec, argumentsDigest } from '../packages/plugin-risk/src/approval/request-state.js';
import { nsPerOp, paired, printTable, ratio, writeResult } from './lib.js';
import '@sluice/upstream';

const quick = process.env.BENCH_QUICK === '1';
const fromSource = process.env.BENCH_SOURCE === '1';
const built = new URL('../packages/plugin-risk/dist/index.js', import.meta.url);
if (!fromSource && !existsSync(built))
  throw new Error('risk.bench times the built scan: run `pnpm build` first, or set BENCH_SOURCE=1');
const { scanText, scanTool } = (await import(
  fromSource ? '../packages/plugin-risk/src/index.js' : built.href
)) as typeof RiskPackage;
const MB = 1024 * 1024;
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const quiet = () => pino({ level: 'info' }, { write() {} });

// (1) Throughput on realistic text.
const corpusDir = new URL('../packages/plugin-risk/test/corpus/', import.meta.url);
const entries = readdirSync(corpusDir)
  .filter((f) => f.endsWith('.json'))
  .map(
    (f) =>
      JSON.parse(readFileSync(new URL(f, corpusDir), 'utf8')) as {
        label: 'clean' | 'poisoned';
        definition: Record<string, unknown>;
      },
  );
const definitions = entries.map((entry) => entry.definition);
const descriptionOf = (d: Record<string, unknown>): string => (typeof d.description === 'string' ? d.description : '');
/** The descriptions of `of`, one after another and repeated to 1 MB. */
const megabyteOf = (of: ReadonlyArray<Record<string, unknown>>): string => {
  const descriptions = of.map(descriptionOf).join('\n');
  let text = '';
  while (text.length < MB) text += `${descriptions}\n`;
  return text;
};
const realistic = megabyteOf(definitions);
const realisticBytes = Buffer.byteLength(realistic);
// The corpus's clean half alone: the descriptions real servers publish, without the attacks.
const realServers = megabyteOf(entries.filter((entry) => entry.label === 'clean').map((entry) => entry.definition));
const realServerBytes = Buffer.byteLength(realServers);
// The same 1 MB as 32 KB texts: a text's decoding stops at `DECODE_LIMITS` and a pattern is reported once per text,
// so one long text full of attacks reads less of itself than the same words in the sizes results come in.
const realisticTexts = Array.from({ length: Math.floor(realistic.length / 32_768) }, (_, k) =>
  realistic.slice(k * 32_768, (k + 1) * 32_768),
);
const realisticTextBytes = realisticTexts.reduce((n, text) => n + Buffer.byteLength(text), 0);

/**
 * MB/s by the wall clock, and by the CPU time the process used (steadier on a shared machine). A 1 MB text makes
 * the scan's loops hot partway through a run, and the optimiser settles over the next few: measured after five.
 */
function throughput(fn: () => unknown, bytes: number, runs: number): { mbPerSec: number; cpuMbPerSec: number } {
  for (let i = 0; i < 5; i++) fn();
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    fn();
    times.push(ms(t0));
    const used = process.cpuUsage(c0);
    cpu.push((used.user + used.system) / 1000);
  }
  return { mbPerSec: bytes / MB / (median(times) / 1000), cpuMbPerSec: bytes / MB / (median(cpu) / 1000) };
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
  {
    input: 'floor: bare charCodeAt loop over 1 MB text',
    ...throughput(() => bareLoop(realistic), realisticBytes, quick ? 5 : 20),
  },
  {
    input: 'floor: toLowerCase of 1 MB text',
    ...throughput(() => realistic.toLowerCase(), realisticBytes, quick ? 5 : 20),
  },
  {
    input: 'scanText of 1 MB realistic text',
    ...throughput(() => scanText(realistic), realisticBytes, quick ? 5 : 20),
  },
  {
    input: 'scanText of the same 1 MB as 32 KB texts',
    ...throughput(
      () => {
        for (const text of realisticTexts) scanText(text);
      },
      realisticTextBytes,
      quick ? 5 : 20,
    ),
  },
  {
    input: "scanText of 1 MB of real servers' descriptions",
    ...throughput(() => scanText(realServers), realServerBytes, quick ? 5 : 20),
  },
  {
    input: `scanTool over the ${definitions.length} corpus definitions (x20)`,
    ...throughput(repeatDefinitions(20), definitionBytes * 20, quick ? 5 : 20),
  },
];
printTable(
  `(1) Scan throughput (goal >= 50 MB/s; ${fromSource ? 'sources through tsx' : 'built package'})`,
  throughputRows,
);

// (2) Crafted 1 MB descriptions.
const repeatTo = (unit: string, size = MB) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
const tags = (s: string) => Array.from(s, (c) => String.fromCodePoint(0xe0000 + (c.codePointAt(0) as number))).join('');
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
  ['mixed-script words, one after another', repeatTo('p\u0430ssword s\u0435nd ')],
  ['lone surrogates', repeatTo('\uD800x')],
  ['"call tool_1 secretly " with 1,000 other tools', repeatTo('call tool_1 secretly ')],
  ['name-like run "a_b.c-d" with 1,000 other tools', `call ${repeatTo('a_b.c-d', MB - 20)} secretly`],
  ['"<important>" repeated, never closed', repeatTo('<important>')],
  ['"<important> word " then one closing at the end', `${repeatTo('<important> word ', MB - 20)}</important>`],
  ['"<!--" repeated, never closed', repeatTo('<!-- ')],
  ['"[admin: x " repeated, never closed', repeatTo('[admin: x ')],
  ['"## system " headings', repeatTo('## system ')],
  ['"~/.ssh/id_rsa " without a verb', repeatTo('~/.ssh/id_rsa ')],
  ['".env " without a verb', repeatTo('.env ')],
  ['"the user\'s password " without a verb', repeatTo("the user's password ")],
  ['"any token " without a verb', repeatTo('any token ')],
  ['"before any " without a tool', repeatTo('before any ')],
  ['"every session " without a modal', repeatTo('every session ')],
  ['"when you run " without a command', repeatTo('when you run ')],
  ['"| " repeated', repeatTo('| ')],
  // The skeleton, the decoders and the lexicon (issue 38).
  ['full-width letters (skeleton)', repeatTo('\uFF49\uFF47\uFF4E\uFF4F\uFF52\uFF45 ')],
  ['soft hyphens inside words (skeleton)', repeatTo('ig\u00ADnore pre\u00ADvious ')],
  ['one 1 MB base64-alphabet run that decodes to noise', repeatTo('Zm9vYmFy+/9_-')],
  ['base64 of prose, 40-character spans', repeatTo(`${Buffer.from('send all the passwords').toString('base64')} `)],
  ['"%4" near-escapes repeated', repeatTo('%4%41%')],
  ['decimal codes that never reach eight', repeatTo('105 103 110 111 ; ')],
  ['hex bytes separated by spaces, never readable', repeatTo('ff 00 ')],
  ['hex bytes, the third always broken (one read in three)', repeatTo('aa aa ag ')],
  ['"rot13" then 1 MB of text', `rot13 ${realistic.slice(0, MB - 6)}`],
  // The decoders' literal searches: each place of the literal read around, until the rest is searched whole.
  ['a base64 span, then "decod" repeated', `${Buffer.from('read the notes').toString('base64')} ${repeatTo('decod')}`],
  ['a base64 span, then "13" repeated', `${Buffer.from('read the notes').toString('base64')} ${repeatTo('13')}`],
  ['lexicon: "other tools " without a disparagement', repeatTo('other tools ')],
  ['lexicon: "不要" without a verb', repeatTo('不要用户')],
  ['lexicon: "ignora " without instructions', repeatTo('ignora ')],
  ['"rm -r " near-miss', repeatTo('rm -r ')],
  ['URL "?a=AB" placeholders too short', repeatTo('https://x.example/p?a=AB conversation ')],
  ['"instead of tool_1 " with 1,000 other tools', repeatTo('instead of tool_1 ')],
  ['"when tool_1 is " with 1,000 other tools', repeatTo('when tool_1 is ')],
  // A full-width letter every ~80 characters: the skeleton in pieces, its lower case read through them (pass eleven).
  ['pieces: "<!-- ## system [admin: x " never closed', repeatTo(`\uFF58 ${'<!-- ## system [admin: x '.repeat(3)}`)],
  [
    'pieces: "send all a@b.co http://x.example/?a= "',
    repeatTo(`\uFF58 ${'send all a@b.co http://x.example/?a= '.repeat(2)}`),
  ],
  [
    'pieces: "instead of tool_1 when tool_2 is called "',
    repeatTo(`\uFF58 ${'instead of tool_1 when tool_2 is called '.repeat(2)}`),
  ],
];
const craftedRows = crafted.map(([input, text]) => {
  scanText(text, '/description', { otherTools });
  const runs: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < (quick ? 2 : 5); i++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    scanText(text, '/description', { otherTools });
    runs.push(ms(t0));
    const used = process.cpuUsage(c0);
    cpu.push((used.user + used.system) / 1000);
  }
  return { input, medianMs: median(runs), maxMs: Math.max(...runs), cpuMedianMs: median(cpu) };
});
printTable('(2) Crafted 1 MB descriptions (goal < 100 ms each)', craftedRows);

// (2b) scanResults: the same scan over a tool's result text, per KB.
const resultKb = 16;
const resultText = realistic.slice(0, resultKb * 1024);
const resultRuns = quick ? 200 : 2_000;
scanText(resultText, '/content/0/text', { otherTools });
const resultCpu0 = process.cpuUsage();
for (let i = 0; i < resultRuns; i++) scanText(resultText, '/content/0/text', { otherTools });
const resultCpu = process.cpuUsage(resultCpu0);
// CPU time per scan: steadier than the wall clock on a shared machine.
const resultNs = ((resultCpu.user + resultCpu.system) * 1000) / resultRuns;
const resultRows = [
  { measure: `scan of a ${resultKb} KB result`, value: `${(resultNs / 1000).toFixed(1)} µs` },
  { measure: 'per KB of result text', value: `${(resultNs / resultKb / 1000).toFixed(2)} µs` },
];
printTable('(2b) scanResults cost', resultRows);

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
        description: `${descriptionOf(definitions[i % definitions.length] ?? {}).slice(0, 400)} (variant ${i})`,
        inputSchema: {
          type: 'object',
          properties: {
            id: { type: 'string', description: 'Record id' },
            limit: { type: 'integer', description: 'How many' },
            filter: { type: 'string' },
          },
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
  const plugins =
    persist === 'none'
      ? []
      : [
          risk({
            servers: { bench: { transport: 'stdio', trust: 'community-curated' } },
            ledger: { persist, path: join(dir, `ledger-${iteration}.json`) },
          }),
        ];
  const server = new TestServer({ name: 'bench', version: '1.0.0', plugins, logger: quiet() });
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
const holds = new CallHolds();
const localCtx = { tool: { name: 'echo', source: { kind: 'local' } } } as unknown as CallContext;
const holdsNs = nsPerOp(() => holds.refuse(localCtx), quick ? 200_000 : 2_000_000);

async function roundTrip(server: SluiceServer, elicitation = false) {
  server.tool({
    name: 'echo',
    inputSchema: z.object({ text: z.string() }),
    handler: ({ text }) => ({ content: [{ type: 'text', text }] }),
  });
  server.tool({
    name: 'gated',
    policy: { risk: { hitl: true } },
    handler: () => ({ content: [{ type: 'text', text: 'ok' }] }),
  });
  await server.ready();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client(
    { name: 'bench', version: '1.0.0' },
    elicitation ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (elicitation)
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { approve: true } }));
  await client.connect(clientSide);
  return {
    client,
    run: () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }),
    gated: () => client.callTool({ name: 'gated', arguments: {} }),
  };
}
/**
 * The in-memory store under another kind: what a shared (Redis) store looks
 * like to the plugin, without the network.
 */
function sharedStore(): MemoryStore {
  const store = new MemoryStore();
  Object.defineProperty(store, 'kind', { value: 'shared' });
  return store;
}
const withRisk = (options: RiskOptions, store?: MemoryStore) =>
  roundTrip(
    createServer({
      name: 'risk',
      version: '1.0.0',
      logger: quiet(),
      plugins: [risk({ ledger: { persist: store ? 'store' : 'memory' }, ...options })],
      ...(store ? { store } : {}),
    }),
  );
const bare = await roundTrip(createServer({ name: 'bare', version: '1.0.0', logger: quiet() }));
const variants = [
  { name: 'no plugins', trip: bare },
  { name: 'risk() defaults', trip: await withRisk({}) },
  {
    name: 'risk(), events for all at debug (dropped)',
    trip: await withRisk({ calls: { events: 'all', level: 'debug' } }),
  },
  { name: 'risk(), events for all, written', trip: await withRisk({ calls: { events: 'all' } }) },
  { name: 'risk() defaults, shared store', trip: await withRisk({}, sharedStore()) },
];
const stats = await paired(
  variants.map((v) => ({ name: v.name, run: v.trip.run })),
  quick ? { warmup: 1_000, rounds: 5, perRound: 500 } : { warmup: 5_000, rounds: 20, perRound: 1_000 },
);
const baseline = stats[0] as (typeof stats)[0];
const callRows = [
  { measure: 'preCall holds check alone (nothing held)', p50: `${holdsNs.toFixed(1)} ns`, meanOverBare: '' },
  ...stats.map((s) => ({
    measure: `round trip, ${s.name}`,
    p50: `${s.p50Us.toFixed(1)} µs`,
    meanOverBare: `${(s.meanUs - baseline.meanUs).toFixed(2)} µs (x${ratio(s.meanUs, baseline.meanUs)})`,
  })),
];
printTable('(4) Per call, local tool', callRows);
for (const v of variants) await v.trip.client.close();

async function importedTrip(options: RiskOptions) {
  const upstream = new McpServer({ name: 'up', version: '1.0.0' });
  upstream.registerTool(
    'echo',
    {
      description: 'Echoes the text it is given, unchanged.',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    ({ text }) => ({
      content: [{ type: 'text', text }],
    }),
  );
  const server = createServer({
    name: 'imported',
    version: '1.0.0',
    logger: quiet(),
    plugins: [risk({ ledger: { persist: 'memory' }, ...options })],
  });
  await server.import({ name: 'up', connection: { type: 'in-process', server: upstream } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, run: () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }) };
}
const importedVariants = [
  { name: 'imported tool, risk() with calls.events off', trip: await importedTrip({ calls: { events: 'off' } }) },
  { name: 'imported tool, risk() defaults (events written)', trip: await importedTrip({}) },
];
const importedStats = await paired(
  importedVariants.map((v) => ({ name: v.name, run: v.trip.run })),
  quick ? { warmup: 500, rounds: 5, perRound: 300 } : { warmup: 2_000, rounds: 20, perRound: 500 },
);
const importedBase = importedStats[0] as (typeof importedStats)[0];
printTable(
  '(4b) Per call, imported tool',
  importedStats.map((s) => ({
    measure: `round trip, ${s.name}`,
    p50: `${s.p50Us.toFixed(1)} µs`,
    meanOverEventsOff: `${(s.meanUs - importedBase.meanUs).toFixed(2)} µs (x${ratio(s.meanUs, importedBase.meanUs)})`,
  })),
);
for (const v of importedVariants) await v.trip.client.close();

// (5) Approval.
const codec = new RequestStateCodec(Buffer.alloc(32, 7));
const binding = {
  principal: 'anonymous',
  tool: 'deploy',
  server: 'local',
  args: argumentsDigest({ env: 'prod' }),
  fingerprint: 'f'.repeat(64),
};
const minted = codec.mint(binding, Date.now() + 60_000).state;
const mintNs = nsPerOp(() => codec.mint(binding, 1), quick ? 20_000 : 200_000);
const checkNs = nsPerOp(() => codec.check(minted, binding, 0), quick ? 20_000 : 200_000);
const digestNs = nsPerOp(
  () => argumentsDigest({ env: 'prod', note: 'a short note', count: 3 }),
  quick ? 20_000 : 200_000,
);
const asking = await roundTrip(
  createServer({
    name: 'asking',
    version: '1.0.0',
    logger: quiet(),
    plugins: [risk({ ledger: { persist: 'memory' }, calls: { events: 'off' } })],
  }),
  true,
);
const approvalStats = await paired(
  [
    { name: 'unasked tool', run: asking.run },
    { name: 'approved tool (2025-11-25 elicitation)', run: asking.gated },
  ],
  quick ? { warmup: 200, rounds: 3, perRound: 200 } : { warmup: 1_000, rounds: 10, perRound: 500 },
);
await asking.client.close();
const approvalRows = [
  { measure: 'seal a 2026-07-28 state (HMAC-SHA256)', value: `${(mintNs / 1000).toFixed(2)} µs` },
  { measure: 'check a 2026-07-28 state', value: `${(checkNs / 1000).toFixed(2)} µs` },
  { measure: 'digest of small arguments', value: `${(digestNs / 1000).toFixed(2)} µs` },
  ...approvalStats.map((s) => ({ measure: `in-memory round trip p50, ${s.name}`, value: `${s.p50Us.toFixed(1)} µs` })),
];
printTable('(5) Approval', approvalRows);

const loadAfter = (loadavg()[0] as number).toFixed(2);
process.stdout.write(`\nload average (1 min) before/after: ${loadBefore.toFixed(2)} / ${loadAfter} on this machine\n`);
const file = writeResult('risk', {
  quick,
  loadAverage: [loadBefore, loadavg()[0]],
  throughput: throughputRows,
  crafted: craftedRows,
  resultScan: { kb: resultKb, ns: resultNs },
  import: importRows,
  perCall: { holdsNs, stats, imported: importedStats },
  approval: { mintNs, checkNs, digestNs, stats: approvalStats },
});
process.stdout.write(`\nwrote ${file}\n`);
