// The cost of the gateway over loopback HTTP, in one process, paired A/B:
// (a) a client calling the upstream directly;
// (b) through a minimal pass-through proxy written with the bare SDK (client + server, nothing else);
// (c) through the gateway (createGateway, the code `sluice serve` runs) with no plugins: telemetry on
//     (metrics and a span per call, no OpenTelemetry SDK registered), the request filter off;
// (d) as (c) with every plugin on, at settings that let the calls through.
// Every hop is Streamable HTTP on 127.0.0.1; the upstream is a bare SDK server. Ratios c/b and d/b.
// Run: cd packages/core && node --conditions=sluice:source --import tsx ../../bench/gateway.bench.ts
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  McpServer,
  Server,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
} from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { pino } from 'pino';
import { z } from 'zod';
import { createGateway } from '../packages/gateway/src/index.js';
import type { Gateway, GatewayConfigInput } from '../packages/gateway/src/index.js';
import { paired, printTable, ratio, writeResult } from './lib.js';
import '@sluice/http';

/** Listens on a free loopback port with a fetch-shaped handler. */
async function listen(fetch: (request: Request) => Promise<Response>): Promise<{ url: URL; server: http.Server }> {
  const node = toNodeHandler({ fetch });
  const server = http.createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), server };
}

async function stop(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** The upstream: an SDK server factory behind the SDK's own HTTP handler. */
async function serveUpstream(): Promise<{ url: URL; close(): Promise<void> }> {
  const handler = createMcpHandler(upstreamServer, {});
  const { url, server } = await listen((request) => handler.fetch(request));
  return {
    url,
    close: async () => {
      await stop(server);
      await handler.close();
    },
  };
}

function upstreamServer(): Server {
  const server = new McpServer({ name: 'upstream', version: '1' });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server.server;
}

async function connect(url: URL): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

/**
 * The least any proxy can do: one SDK server on one stateful Streamable HTTP
 * transport (the bench's single client is its one session), forwarding
 * tools/list and tools/call to an SDK client of the upstream.
 */
async function bareProxy(upstreamUrl: URL) {
  const up = await connect(upstreamUrl);
  const proxy = new Server({ name: 'proxy', version: '1' }, { capabilities: { tools: {} } });
  proxy.setRequestHandler('tools/list', () => up.listTools());
  proxy.setRequestHandler('tools/call', (request) => up.callTool(request.params));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await proxy.connect(transport);
  const { url, server } = await listen((request) => transport.handleRequest(request));
  return {
    url,
    close: async () => {
      await stop(server);
      await proxy.close();
      await up.close();
    },
  };
}

async function gateway(
  upstreamUrl: URL,
  plugins: GatewayConfigInput['plugins'],
): Promise<{ url: URL; gateway: Gateway }> {
  const built = createGateway(
    {
      listen: { http: { port: 0 } },
      upstreams: [{ name: 'up', connection: { type: 'http', url: upstreamUrl.href } }],
      plugins,
    },
    { logger: pino({ level: 'silent' }) },
  );
  const { http: listener } = await built.start();
  return { url: listener!.url, gateway: built };
}

const EVERY_PLUGIN: GatewayConfigInput['plugins'] = {
  loopGuard: { originService: 'bench' },
  requestFilter: {},
  risk: { ledger: { persist: 'memory' } },
  concurrency: { default: { maxActive: 64, maxQueue: 64 } },
  egress: { maxPayloadBytes: 1024 * 1024 },
  chaining: {},
};

const upstream = await serveUpstream();
const proxy = await bareProxy(upstream.url);
const plain = await gateway(upstream.url, { requestFilter: false });
const full = await gateway(upstream.url, EVERY_PLUGIN);
const clients = {
  a: await connect(upstream.url),
  b: await connect(proxy.url),
  c: await connect(plain.url),
  d: await connect(full.url),
};
const names = (await clients.d.listTools()).tools.map((t) => t.name);
if (!names.includes('echo')) throw new Error(`the gateway with every plugin does not expose echo: ${names.join(', ')}`);
const call = (client: Client) => async () => {
  const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  if (result.isError) throw new Error(`echo failed: ${JSON.stringify(result)}`);
};

const quick = process.env.BENCH_QUICK === '1';
const settings = quick ? { warmup: 200, rounds: 4, perRound: 100 } : { warmup: 1_500, rounds: 12, perRound: 300 };
const stats = await paired(
  [
    { name: 'a: upstream directly', run: call(clients.a) },
    { name: 'b: bare SDK pass-through proxy', run: call(clients.b) },
    { name: 'c: gateway, no plugins', run: call(clients.c) },
    { name: 'd: gateway, every plugin', run: call(clients.d) },
  ],
  settings,
);
printTable(
  'tools/call round trip over loopback Streamable HTTP',
  stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'calls/s': Math.round(s.opsPerSec) })),
);
const [, b, c, d] = stats as [(typeof stats)[0], (typeof stats)[0], (typeof stats)[0], (typeof stats)[0]];
const ratios = {
  'c/b p50': ratio(c.p50Us, b.p50Us),
  'c/b calls/s': ratio(c.opsPerSec, b.opsPerSec),
  'd/b p50': ratio(d.p50Us, b.p50Us),
  'd/b calls/s': ratio(d.opsPerSec, b.opsPerSec),
};
printTable('Ratios against the bare SDK proxy (goals: c/b p50 <= 1.10, c/b calls/s >= 0.90, d/b p50 <= 1.15)', [
  ratios,
]);
writeResult('gateway', { settings, stats, ratios });
for (const client of Object.values(clients)) await client.close();
await plain.gateway.close();
await full.gateway.close();
await proxy.close();
await upstream.close();
process.exit(0);
