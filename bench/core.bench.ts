// In-memory tools/call round trips: (a) the bare SDK v2 McpServer, (b) a Sluice
// server with no plugins, (c) a Sluice server with five stand-in plugins that tap every
// hook and let the call through, (d) a Sluice server with the five real plugins
// (loop guard, risk, concurrency, egress, chaining) at settings that let the call
// through. Ratios b/a, c/a and d/a; goals 1.02, 1.05 and 1.05.
import { Client } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { z } from 'zod';
import { createServer, definePlugin } from '../packages/core/src/index.js';
import type { Plugin } from '../packages/core/src/index.js';
import { chaining } from '../packages/plugin-chaining/src/index.js';
import { concurrency } from '../packages/plugin-concurrency/src/index.js';
import { egress } from '../packages/plugin-egress/src/index.js';
import { loopGuard } from '../packages/plugin-loop-guard/src/index.js';
import { risk } from '../packages/plugin-risk/src/index.js';
import { connectInMemory as connect, paired, printTable, ratio, writeResult } from './lib.js';

const input = z.object({ text: z.string() });
const reply = (text: string) => ({ content: [{ type: 'text' as const, text }] });

function passThrough(name: string): Plugin {
  return definePlugin({
    name,
    version: '1.0.0',
    apply: ({ hooks }) => {
      hooks.import.tap(name, (batch) => batch);
      hooks.listTools.tap(name, (tools) => tools);
      hooks.preCall.tap(name, () => undefined);
      hooks.execute.tap(name, (next) => (ctx) => next(ctx));
      hooks.postCall.tap(name, (result) => result);
      hooks.settled.tap(name, () => {});
    },
  });
}

async function sluice(plugins: Plugin[]): Promise<Client> {
  const server = createServer({ name: 'bench', version: '1', plugins, logger: pino({ level: 'silent' }) });
  server.tool({ name: 'echo', inputSchema: input, handler: ({ text }) => reply(text) });
  return connect(server);
}

const bare = new McpServer({ name: 'bench', version: '1' });
bare.registerTool('echo', { inputSchema: input }, ({ text }) => reply(text));

const clients = {
  a: await connect(bare),
  b: await sluice([]),
  c: await sluice(['p1', 'p2', 'p3', 'p4', 'p5'].map(passThrough)),
  d: await sluice([
    loopGuard({ originService: 'bench' }),
    risk({ ledger: { persist: 'memory' } }),
    concurrency({ default: { maxActive: 256, maxQueue: 256 } }),
    egress({ maxPayloadBytes: 1024 * 1024 }),
    chaining({}),
  ]),
};
const call = (client: Client) => () => client.callTool({ name: 'echo', arguments: { text: 'hi' } });

const quick = process.env.BENCH_QUICK === '1';
const stats = await paired(
  [
    { name: 'a: bare SDK v2', run: call(clients.a) },
    { name: 'b: Sluice, no plugins', run: call(clients.b) },
    { name: 'c: Sluice, 5 pass-through plugins', run: call(clients.c) },
    { name: 'd: Sluice, the 5 real plugins', run: call(clients.d) },
  ],
  quick ? { warmup: 1_000, rounds: 4, perRound: 500 } : { warmup: 5_000, rounds: 30, perRound: 1_000 },
);
const [a, b, c, d] = stats as [(typeof stats)[0], (typeof stats)[0], (typeof stats)[0], (typeof stats)[0]];
printTable(
  'In-memory tools/call round trip',
  stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'calls/s': Math.round(s.opsPerSec) })),
);
const ratios = {
  'b/a p50': ratio(b.p50Us, a.p50Us),
  'c/a p50': ratio(c.p50Us, a.p50Us),
  'd/a p50': ratio(d.p50Us, a.p50Us),
  'b/a mean': ratio(b.meanUs, a.meanUs),
  'c/a mean': ratio(c.meanUs, a.meanUs),
  'd/a mean': ratio(d.meanUs, a.meanUs),
  'c-b per call µs (5 plugins)': Math.round((c.meanUs - b.meanUs) * 1000) / 1000,
  'd-b per call µs (5 real plugins)': Math.round((d.meanUs - b.meanUs) * 1000) / 1000,
};
printTable('Ratios (goals: b/a <= 1.02, c/a <= 1.05, d/a <= 1.05)', [ratios]);
writeResult('core', { stats, ratios, goals: { 'b/a': 1.02, 'c/a': 1.05, 'd/a': 1.05 } });
for (const client of Object.values(clients)) await client.close();
