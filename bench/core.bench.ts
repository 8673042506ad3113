// In-memory tools/call round trips: (a) the bare SDK v2 McpServer, (b) a Sluice
// server with no plugins, (c) a Sluice server with five stand-in plugins that tap every
// hook and let the call through, (d) a Sluice server with the five real plugins
// (loop guard, risk, concurrency, egress, chaining) at settings that let the call
// through. Ratios b/a, c/a and d/a; goals 1.02, 1.05 and 1.05.
//
// Each variant runs in a process of its own, as a deployment runs one kind of server
// per process, and Sluice runs as users get it: the built packages (`pnpm build`; `pnpm
// bench` builds first). BENCH_SOURCE=1 runs the TypeScript sources through tsx instead,
// whose transform names every function expression when it is created (a cost the built
// packages do not have).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { z } from 'zod';
import { createServer, definePlugin } from '@sluice/core';
import type { Plugin } from '@sluice/core';
import { chaining } from '@sluice/plugin-chaining';
import { concurrency } from '@sluice/plugin-concurrency';
import { egress } from '@sluice/plugin-egress';
import { loopGuard } from '@sluice/plugin-loop-guard';
import { risk } from '@sluice/plugin-risk';
import { connectInMemory as connect, pairedInProcesses, printTable, ratio, serveRounds, writeResult } from './lib.js';
import type { Stats } from './lib.js';

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

async function bare(): Promise<Client> {
  const server = new McpServer({ name: 'bench', version: '1' });
  server.registerTool('echo', { inputSchema: input }, ({ text }) => reply(text));
  return connect(server);
}

const variants = {
  a: { name: 'a: bare SDK v2', connect: bare },
  b: { name: 'b: Sluice, no plugins', connect: () => sluice([]) },
  c: {
    name: 'c: Sluice, 5 pass-through plugins',
    connect: () => sluice(['p1', 'p2', 'p3', 'p4', 'p5'].map(passThrough)),
  },
  d: {
    name: 'd: Sluice, the 5 real plugins',
    connect: () =>
      sluice([
        loopGuard({ originService: 'bench' }),
        risk({ ledger: { persist: 'memory' } }),
        concurrency({ default: { maxActive: 256, maxQueue: 256 } }),
        egress({ maxPayloadBytes: 1024 * 1024 }),
        chaining({}),
      ]),
  },
};
type Key = keyof typeof variants;

const child = process.env.BENCH_VARIANT as Key | undefined;
if (child !== undefined) {
  const client = await variants[child].connect();
  serveRounds(() => client.callTool({ name: 'echo', arguments: { text: 'hi' } }));
} else {
  const source = process.env.BENCH_SOURCE === '1';
  if (!source && !existsSync(fileURLToPath(new URL('../packages/core/dist/index.js', import.meta.url)))) {
    throw new Error('core.bench measures the built packages: run `pnpm build` first, or set BENCH_SOURCE=1');
  }
  const quick = process.env.BENCH_QUICK === '1';
  const stats = await pairedInProcesses(
    fileURLToPath(import.meta.url),
    (Object.keys(variants) as Key[]).map((key) => ({ name: variants[key].name, key })),
    {
      ...(quick ? { warmup: 1_000, rounds: 4, perRound: 500 } : { warmup: 5_000, rounds: 100, perRound: 1_000 }),
      // The `sluice:source` condition picks the TypeScript sources over the built packages.
      execArgv: [...(source ? ['--conditions=sluice:source'] : []), '--import', 'tsx'],
    },
  );
  report(stats, source ? 'sources through tsx' : 'built packages');
}

function report(stats: Stats[], running: string): void {
  const [a, b, c, d] = stats as [Stats, Stats, Stats, Stats];
  printTable(
    `In-memory tools/call round trip (each variant in its own process; Sluice's ${running})`,
    stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'calls/s': Math.round(s.opsPerSec) })),
  );
  const ratios = {
    'b/a p50': ratio(b.p50Us, a.p50Us),
    'c/a p50': ratio(c.p50Us, a.p50Us),
    'd/a p50': ratio(d.p50Us, a.p50Us),
    'b/a mean': ratio(b.meanUs, a.meanUs),
    'c/a mean': ratio(c.meanUs, a.meanUs),
    'd/a mean': ratio(d.meanUs, a.meanUs),
    'c-b p50 µs (5 plugins)': Math.round((c.p50Us - b.p50Us) * 1000) / 1000,
    'd-b p50 µs (5 real plugins)': Math.round((d.p50Us - b.p50Us) * 1000) / 1000,
  };
  printTable('Ratios (goals: b/a <= 1.02, c/a <= 1.05, d/a <= 1.05)', [ratios]);
  writeResult('core', { running, stats, ratios, goals: { 'b/a': 1.02, 'c/a': 1.05, 'd/a': 1.05 } });
}
