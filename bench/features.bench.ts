// The cost of Sluice's proxy for resources and prompts, in one process, paired A/B:
// (a) a client reading a resource / getting a prompt of an in-memory v2 McpServer directly;
// (b) through a minimal pass-through proxy written with the bare SDK (client + server, nothing else);
// (c) through a Sluice server that imported the upstream, no plugins;
// (g) the Sluice server of (c) with the concurrency plugin guarding reads and gets (the `guard` hook's cost
//     plus a semaphore per request: the price of a guarded resources/read);
// (s) for information: the bare proxy of (b) that also forwards the client's cancellation upstream, as Sluice does
//     (the SDK client then listens on each request's AbortSignal, which costs microseconds on Node 20).
// Ratios c/b per method: the proxy's own overhead (goal: <= 1.10 at p50); g/c: what a guard costs;
// s/b: what forwarding cancellation costs.
import { Client } from '@modelcontextprotocol/client';
import { McpServer, Server } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { z } from 'zod';
import { createServer } from '../packages/core/src/index.js';
import type { Plugin } from '../packages/core/src/index.js';
import { concurrency } from '../packages/plugin-concurrency/src/index.js';
import { connectInMemory as connect, paired, printTable, ratio, writeResult } from './lib.js';
import '@sluice/upstream';

const URI = 'bench://note';

function upstream(): McpServer {
  const server = new McpServer({ name: 'upstream', version: '1' });
  server.registerResource('note', URI, { mimeType: 'text/plain' }, () => ({ contents: [{ uri: URI, text: 'hello' }] }));
  server.registerPrompt('greet', { argsSchema: z.object({ who: z.string() }) }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `hello ${who}` } }],
  }));
  return server;
}

/** The least any proxy can do: forward resources/read and prompts/get with the bare SDK (cancelling upstream too, if asked). */
async function bareProxy(forwardCancellation = false): Promise<Client> {
  const up = await connect(upstream());
  const proxy = new Server({ name: 'proxy', version: '1' }, { capabilities: { resources: {}, prompts: {} } });
  proxy.setRequestHandler('resources/read', (request, ctx) =>
    up.readResource(request.params, {
      cacheMode: 'bypass',
      ...(forwardCancellation ? { signal: ctx.mcpReq.signal } : {}),
    }),
  );
  proxy.setRequestHandler('prompts/get', (request, ctx) =>
    up.getPrompt(request.params, forwardCancellation ? { signal: ctx.mcpReq.signal } : {}),
  );
  return connect(proxy);
}

async function sluice(plugins: Plugin[] = []): Promise<Client> {
  const server = createServer({ name: 'bench', version: '1', plugins, logger: pino({ level: 'silent' }) });
  await server.import({ name: 'up', connection: { type: 'in-process', server: upstream() } });
  return connect(server);
}

const clients = {
  a: await connect(upstream()),
  b: await bareProxy(),
  c: await sluice(),
  g: await sluice([concurrency({ default: { maxActive: 256, maxQueue: 256 } })]),
  s: await bareProxy(true),
};
const read = (client: Client) => () => client.readResource({ uri: URI }, { cacheMode: 'bypass' });
const get = (client: Client) => () => client.getPrompt({ name: 'greet', arguments: { who: 'you' } });

const quick = process.env.BENCH_QUICK === '1';
const settings = quick ? { warmup: 500, rounds: 4, perRound: 250 } : { warmup: 3_000, rounds: 16, perRound: 500 };
const reads = await paired(
  [
    { name: 'a: resources/read directly', run: read(clients.a) },
    { name: 'b: resources/read, bare SDK proxy', run: read(clients.b) },
    { name: 'c: resources/read, Sluice import', run: read(clients.c) },
    { name: 's: resources/read, bare proxy forwarding cancellation', run: read(clients.s) },
    { name: 'g: resources/read, Sluice import, guarded (concurrency)', run: read(clients.g) },
  ],
  settings,
);
const gets = await paired(
  [
    { name: 'a: prompts/get directly', run: get(clients.a) },
    { name: 'b: prompts/get, bare SDK proxy', run: get(clients.b) },
    { name: 'c: prompts/get, Sluice import', run: get(clients.c) },
    { name: 's: prompts/get, bare proxy forwarding cancellation', run: get(clients.s) },
    { name: 'g: prompts/get, Sluice import, guarded (concurrency)', run: get(clients.g) },
  ],
  settings,
);
const stats = [...reads, ...gets];
printTable(
  'resources/read and prompts/get through an imported upstream',
  stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'calls/s': Math.round(s.opsPerSec) })),
);
type Stat = (typeof stats)[0];
const [, rb, rc, rs, rg] = reads as [Stat, Stat, Stat, Stat, Stat];
const [, gb, gc, gs, gg] = gets as [Stat, Stat, Stat, Stat, Stat];
const ratios = {
  'read c/b p50': ratio(rc.p50Us, rb.p50Us),
  'get c/b p50': ratio(gc.p50Us, gb.p50Us),
  'read g/c p50': ratio(rg.p50Us, rc.p50Us),
  'get g/c p50': ratio(gg.p50Us, gc.p50Us),
  'guarded read cost p50 µs': Math.round((rg.p50Us - rc.p50Us) * 10) / 10,
  'read s/b p50': ratio(rs.p50Us, rb.p50Us),
  'get s/b p50': ratio(gs.p50Us, gb.p50Us),
};
printTable(
  'Ratios (c/b: Sluice proxy against the bare SDK proxy, goal <= 1.10; g/c: a guarded request against an unguarded one; s/b: the bare proxy forwarding cancellation, for information)',
  [ratios],
);
writeResult('features', { stats, ratios });
for (const client of Object.values(clients)) await client.close();
process.exit(0);
