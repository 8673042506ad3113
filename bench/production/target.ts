// One benchmark target in a process of its own: it listens on a free loopback port, sends
// `{ url }` to its parent over IPC, then answers every `cpu` message with its process.cpuUsage().
// Usage (forked by production.bench.ts): target.ts <kind> [upstream URL | "stdio"]
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  McpServer,
  Server,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
} from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { pino } from 'pino';
import { z } from 'zod';
import { createGateway } from '../../packages/gateway/src/index.js';
import type { GatewayConfigInput } from '../../packages/gateway/src/index.js';
import '@sluice/http';

export const STDIO_FIXTURE = fileURLToPath(
  new URL('../../packages/core/test/fixtures/stdio-upstream.mjs', import.meta.url),
);

/** The body the raw floor answers every POST with: a tools/call result, as an SDK server would send it. */
const FLOOR_BODY = Buffer.from(
  JSON.stringify({ jsonrpc: '2.0', id: 0, result: { content: [{ type: 'text', text: 'hi' }] } }),
);

async function listen(handler: http.RequestListener): Promise<URL> {
  const server = http.createServer({ keepAliveTimeout: 60_000 }, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return new URL(`http://127.0.0.1:${port}/mcp`);
}

const fetchHandler = (fetch: (request: Request) => Promise<Response>): http.RequestListener => {
  const node = toNodeHandler({ fetch });
  return (req, res) => void node(req, res);
};

/** An SDK echo server behind the SDK's own HTTP handler: the upstream of every HTTP variant. */
function upstream(): Promise<URL> {
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'upstream', version: '1' });
    server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    return server.server;
  }, {});
  return listen(fetchHandler((request) => handler.fetch(request)));
}

/** What the floor answers tools/list with, so that a load client finds the echo tool there too. */
const FLOOR_LIST = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] },
});

/** The floor: node:http answering a fixed JSON-RPC body (with the request's id spliced in). */
function floor(): Promise<URL> {
  return listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const id = /"id":\s*(\d+)/.exec(text)?.[1] ?? '0';
      const body = text.includes('"tools/list"')
        ? Buffer.from(FLOOR_LIST.replace('"id":0', `"id":${id}`))
        : id === '0'
          ? FLOOR_BODY
          : Buffer.from(FLOOR_BODY.toString('latin1').replace('"id":0', `"id":${id}`));
      res.writeHead(200, {
        'content-type': 'application/json',
        'mcp-session-id': 'floor',
        'content-length': body.length,
      });
      res.end(body);
    });
  });
}

/** A byte relay: every request piped to the upstream over a keep-alive agent, every answer piped back. */
function relay(target: URL): Promise<URL> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  return listen((req, res) => {
    const out = http.request(target, { method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
}

function upstreamTransport(target: string): Transport {
  if (target === 'stdio')
    return new StdioClientTransport({ command: process.execPath, args: [STDIO_FIXTURE], stderr: 'ignore' });
  return new StreamableHTTPClientTransport(new URL(target));
}

/** The least any proxy can do: SDK client upstream, SDK server (one stateful session) in front. */
async function bareProxy(target: string): Promise<URL> {
  const up = new Client({ name: 'bench', version: '1' });
  await up.connect(upstreamTransport(target));
  const proxy = new Server({ name: 'proxy', version: '1' }, { capabilities: { tools: {} } });
  proxy.setRequestHandler('tools/list', () => up.listTools());
  proxy.setRequestHandler('tools/call', (request) => up.callTool(request.params));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await proxy.connect(transport);
  return listen(fetchHandler((request) => transport.handleRequest(request)));
}

export const EVERY_PLUGIN: GatewayConfigInput['plugins'] = {
  loopGuard: { originService: 'bench' },
  requestFilter: {},
  risk: { ledger: { persist: 'memory' } },
  concurrency: { default: { maxActive: 256, maxQueue: 256 } },
  egress: { maxPayloadBytes: 1024 * 1024 },
  chaining: {},
};

/** `sluice serve`'s code (createGateway) with the given plugins. */
async function sluice(target: string, plugins: GatewayConfigInput['plugins'], transport?: string): Promise<URL> {
  const connection =
    target === 'stdio'
      ? { type: 'stdio' as const, command: process.execPath, args: [STDIO_FIXTURE] }
      : { type: 'http' as const, url: target, ...(transport ? { transport: transport as 'sdk' } : {}) };
  const gateway = createGateway(
    { listen: { http: { port: 0 } }, upstreams: [{ name: 'up', connection }], plugins },
    { logger: pino({ level: 'silent' }) },
  );
  const { http: listener } = await gateway.start();
  return listener!.url;
}

const [kind = '', target = '', transport] = process.argv.slice(2);
const starters: Record<string, () => Promise<URL>> = {
  upstream,
  floor,
  relay: () => relay(new URL(target)),
  bare: () => bareProxy(target),
  'sluice-none': () => sluice(target, { requestFilter: false }, transport),
  'sluice-all': () => sluice(target, EVERY_PLUGIN, transport),
};
const start = starters[kind];
if (!start) throw new Error(`unknown target kind "${kind}"`);
const url = await start();
function collect(): number {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  // The soak's probe (the target runs with --expose-gc there): the heap after a full collection.
  if (message === 'heap') {
    const before = collect();
    // FinalizationRegistry callbacks run in a task after a collection: what they release goes at the next one.
    setTimeout(() => {
      const settled = collect();
      process.send?.({ heap: settled, unsettled: before });
    }, 50);
  }
  if (typeof message === 'object' && message !== null && 'snapshot' in message)
    process.send?.({ snapshot: writeHeapSnapshot(String(message.snapshot)) });
});
process.on('disconnect', () => process.exit(0));
process.send?.({ url: url.href });
