// The cost of Sluice's upstream proxy, in one process, paired A/B:
// (a) a client calling an in-memory v2 McpServer directly;
// (b) through a minimal pass-through proxy written with the bare SDK (client + server, nothing else);
// (c) through a Sluice server that imported the upstream, no plugins;
// (d) as (c) with the requestFilter() plugin (no headers: in-process);
// (e) a client calling a stdio child directly, and (f) through Sluice importing that child.
// Ratios c/b (the proxy's own overhead) and f/e (the hop over stdio).
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { McpServer, Server } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { z } from 'zod';
import { createServer } from '../packages/core/src/index.js';
import { requestFilter } from '@sluice/upstream';
import type { Plugin } from '../packages/core/src/index.js';
import { connectInMemory as connect, paired, printTable, ratio, writeResult } from './lib.js';

const FIXTURE = fileURLToPath(new URL('../packages/core/test/fixtures/stdio-upstream.mjs', import.meta.url));

function upstream(): McpServer {
  const server = new McpServer({ name: 'upstream', version: '1' });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

/** The least any proxy can do: forward tools/list and tools/call with the bare SDK. */
async function bareProxy(): Promise<Client> {
  const up = await connect(upstream());
  const proxy = new Server({ name: 'proxy', version: '1' }, { capabilities: { tools: {} } });
  proxy.setRequestHandler('tools/list', () => up.listTools());
  proxy.setRequestHandler('tools/call', (request) => up.callTool(request.params));
  return connect(proxy);
}

async function sluice(
  connection: Parameters<ReturnType<typeof createServer>['import']>[0]['connection'],
  plugins: Plugin[] = [],
): Promise<Client> {
  const server = createServer({ name: 'bench', version: '1', plugins, logger: pino({ level: 'silent' }) });
  await server.import({ name: 'up', connection });
  return connect(server);
}

const stdio = { type: 'stdio' as const, command: process.execPath, args: [FIXTURE] };
const directStdio = new Client({ name: 'bench', version: '1' });
await directStdio.connect(new StdioClientTransport({ ...stdio, stderr: 'ignore' }));

const clients = {
  a: await connect(upstream()),
  b: await bareProxy(),
  c: await sluice({ type: 'in-process', server: upstream() }),
  d: await sluice({ type: 'in-process', server: upstream() }, [requestFilter()]),
  e: directStdio,
  f: await sluice(stdio),
};
const call = (client: Client) => () => client.callTool({ name: 'echo', arguments: { text: 'hi' } });

const quick = process.env.BENCH_QUICK === '1';
const settings = quick ? { warmup: 500, rounds: 4, perRound: 250 } : { warmup: 3_000, rounds: 16, perRound: 500 };
const inMemory = await paired(
  [
    { name: 'a: upstream directly', run: call(clients.a) },
    { name: 'b: bare SDK pass-through proxy', run: call(clients.b) },
    { name: 'c: Sluice import, no plugins', run: call(clients.c) },
    { name: 'd: Sluice import + requestFilter', run: call(clients.d) },
  ],
  settings,
);
const overStdio = await paired(
  [
    { name: 'e: stdio child directly', run: call(clients.e) },
    { name: 'f: Sluice importing the stdio child', run: call(clients.f) },
  ],
  settings,
);
const stats = [...inMemory, ...overStdio];
printTable(
  'tools/call round trip through an imported upstream',
  stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'calls/s': Math.round(s.opsPerSec) })),
);
const [, b, c, d] = inMemory as [(typeof stats)[0], (typeof stats)[0], (typeof stats)[0], (typeof stats)[0]];
const [e, f] = overStdio as [(typeof stats)[0], (typeof stats)[0]];
const ratios = {
  'c/b p50': ratio(c.p50Us, b.p50Us),
  'c/b calls/s': ratio(c.opsPerSec, b.opsPerSec),
  'd-c p50 µs': Math.round((d.p50Us - c.p50Us) * 1000) / 1000,
  'f/e p50': ratio(f.p50Us, e.p50Us),
  'f-e p50 µs': Math.round((f.p50Us - e.p50Us) * 1000) / 1000,
};
printTable('Ratios (c/b: Sluice proxy against the bare SDK proxy)', [ratios]);
writeResult('upstream', { stats, ratios });
for (const client of Object.values(clients)) await client.close();
process.exit(0);
