// A v1 SDK server in the SDK's stateless Streamable HTTP pattern (a new server per request), no Sluice:
// the baseline of scripts/consumers-adopt.mjs. Prints "ok" once a client listed and called its tool.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';

function weather() {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({
    content: [{ type: 'text', text: `${city}: sunny` }],
  }));
  return server;
}

const http = createServer((req, res) => {
  const server = weather();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close().then(() => server.close()));
  void server.connect(transport).then(() => transport.handleRequest(req, res));
});
http.listen(0, '127.0.0.1');
await once(http, 'listening');
const client = new Client({ name: 'agent', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${http.address().port}/mcp`)));
const { tools } = await client.listTools();
const result = await client.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
await client.close();
http.closeAllConnections();
http.close();
if (tools.length === 1 && result.content[0].text === 'Oslo: sunny') console.log('ok');
else console.log('unexpected', JSON.stringify({ tools, result }));
