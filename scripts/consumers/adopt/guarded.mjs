// The same v1 SDK server in the stateless Streamable HTTP pattern, with one Sluice guard adopted in the
// per-request factory: at most one forecast at a time, none waiting. Four concurrent calls: one runs, the
// guard refuses three. Prints "ok" when it did (and tools/list answered) (the guard holds across the per-request servers).
import { createServer } from 'node:http';
import { once } from 'node:events';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { adopt } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';

let release;
const gate = new Promise((resolve) => (release = resolve));
let started;
const running = new Promise((resolve) => (started = resolve));

function weather() {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => {
    started();
    await gate;
    return { content: [{ type: 'text', text: `${city}: sunny` }] };
  });
  return server;
}

const http = createServer((req, res) => {
  const server = weather();
  const sluice = adopt(server, [concurrency({ tools: { forecast: { maxActive: 1, maxQueue: 0 } } })]);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close().then(() => Promise.all([server.close(), sluice.close()])));
  void server.connect(transport).then(() => transport.handleRequest(req, res));
});
// No top-level await: the same source also bundles as CommonJS.
async function main() {
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`);
  const clients = [];
  for (let i = 0; i < 4; i++) {
    const client = new Client({ name: `agent-${i}`, version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url));
    clients.push(client);
  }
  const { tools } = await clients[0].listTools();
  if (tools.map((t) => t.name).join() !== 'forecast') throw new Error(`tools/list answered ${JSON.stringify(tools)}`);
  const first = clients[0].callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
  await running;
  const others = await Promise.all(
    clients.slice(1).map((c) => c.callTool({ name: 'forecast', arguments: { city: 'Rome' } })),
  );
  release();
  const ran = await first;
  await Promise.all(clients.map((c) => c.close()));
  http.closeAllConnections();
  http.close();
  const codes = others.map((r) => r._meta?.['dev.sluice/error']?.code);
  if (ran.content[0].text === 'Oslo: sunny' && codes.every((code) => typeof code === 'string'))
    console.log('ok', codes.join(' '));
  else console.log('unexpected', JSON.stringify({ ran, others }));
}
void main();
