// The chaining plugin's cost:
// (1) in process: a 5-call chain (step0 names step1 ... step4; one server.call) against 5 separate
//     server.call()s of tools without directives on the same server, and against a handler that
//     makes the same 4 nested calls itself with ctx.call(): the chain machinery alone;
// (2) through a real SDK client in memory: the same chain in one tools/call against 5 tools/calls,
//     which is what the caller gains;
// (3) a call whose result names no next tool, on a server without plugins and one with chaining():
//     what the plugin adds to every other call.
// Variants alternate round by round in this process.
// Run: cd packages/core && node --conditions=sluice:source --import tsx ../../bench/chaining.bench.ts
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { z } from 'zod';
import { createServer } from '../packages/core/src/index.js';
import type { CallToolResult, Plugin, SluiceServer } from '../packages/core/src/index.js';
import { chaining, withNext } from '../packages/plugin-chaining/src/index.js';
import { paired, printTable, ratio, writeResult } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const CALLS = 5;
const input = z.object({ n: z.number() });
const answer = (name: string, n: number): CallToolResult => ({ content: [{ type: 'text', text: `${name}:${n}` }] });

function serverWith(plugins: Plugin[]): SluiceServer {
  const server = createServer({ name: 'bench', version: '1', plugins, logger: pino({ level: 'silent' }) });
  for (let k = 0; k < CALLS; k++) {
    server.tool({
      name: `step${k}`,
      inputSchema: input,
      handler: ({ n }) =>
        k < CALLS - 1 ? withNext(answer(`step${k}`, n), `step${k + 1}`, { n: n + 1 }) : answer(`step${k}`, n),
    });
    server.tool({ name: `plain${k}`, inputSchema: input, handler: ({ n }) => answer(`plain${k}`, n) });
  }
  // The same five calls, the last four made by the first tool's handler.
  server.tool({
    name: 'by_hand',
    inputSchema: input,
    handler: async ({ n }, ctx) => {
      let last = answer('by_hand', n);
      for (let k = 1; k < CALLS; k++) last = await ctx.call(`plain${k}`, { n: n + k });
      return last;
    },
  });
  return server;
}

async function clientOf(server: SluiceServer): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(a);
  return client;
}

const chained = serverWith([chaining()]);
const bare = serverWith([]);
await Promise.all([chained.ready(), bare.ready()]);
const check = await chained.call('step0', { n: 0 });
if ((check.content[0] as { text: string }).text !== `step${CALLS - 1}:${CALLS - 1}`)
  throw new Error('the chain did not run to its end');

const chainedClient = await clientOf(chained);
const bareClient = await clientOf(bare);

const fiveInProcess = async () => {
  for (let k = 0; k < CALLS; k++) await chained.call(`plain${k}`, { n: k });
};
const fiveOverClient = async () => {
  for (let k = 0; k < CALLS; k++) await chainedClient.callTool({ name: `plain${k}`, arguments: { n: k } });
};
const options = quick ? { warmup: 500, rounds: 4, perRound: 250 } : { warmup: 3_000, rounds: 20, perRound: 500 };

const inProcess = await paired(
  [
    { name: `${CALLS} single server.call()s`, run: fiveInProcess },
    { name: `${CALLS} calls made by one handler`, run: () => chained.call('by_hand', { n: 0 }) },
    { name: `chain of ${CALLS} calls, one server.call()`, run: () => chained.call('step0', { n: 0 }) },
  ],
  options,
);
const overClient = await paired(
  [
    { name: `${CALLS} single tools/calls`, run: fiveOverClient },
    {
      name: `chain of ${CALLS} calls, one tools/call`,
      run: () => chainedClient.callTool({ name: 'step0', arguments: { n: 0 } }),
    },
  ],
  options,
);
const single = await paired(
  [
    { name: 'no plugin, no directive', run: () => bareClient.callTool({ name: 'plain0', arguments: { n: 0 } }) },
    { name: 'chaining(), no directive', run: () => chainedClient.callTool({ name: 'plain0', arguments: { n: 0 } }) },
  ],
  options,
);

const rows = (stats: typeof inProcess) =>
  stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'mean µs': s.meanUs }));
printTable('In process (server.call): chain machinery against the same calls made one by one', rows(inProcess));
printTable('Through an in-memory SDK client', rows(overClient));
printTable('A call whose result names no next tool', rows(single));

const summary = {
  'chain / 5 singles, in process (p50)': ratio(inProcess[2]!.p50Us, inProcess[0]!.p50Us),
  'chain / handler-made calls, in process (p50)': ratio(inProcess[2]!.p50Us, inProcess[1]!.p50Us),
  'chain machinery per chained call, µs (p50)':
    Math.round(((inProcess[2]!.p50Us - inProcess[1]!.p50Us) / (CALLS - 1)) * 1000) / 1000,
  'chain / 5 singles, via client (p50)': ratio(overClient[1]!.p50Us, overClient[0]!.p50Us),
  'added per non-chaining call, µs (mean)': Math.round((single[1]!.meanUs - single[0]!.meanUs) * 1000) / 1000,
  'added per non-chaining call, µs (p50)': Math.round((single[1]!.p50Us - single[0]!.p50Us) * 1000) / 1000,
};
printTable(
  'Summary (goal: a 5-call chain costs at most 5 single calls + 5%)',
  Object.entries(summary).map(([measure, value]) => ({ measure, value })),
);
writeResult('chaining', { calls: CALLS, inProcess, overClient, single, summary, goal: { chainOverSingles: 1.05 } });
await chainedClient.close();
await bareClient.close();
await chained.close();
await bare.close();
