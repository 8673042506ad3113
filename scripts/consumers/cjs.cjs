// A CommonJS consumer: one guard in front of one tool, called by a real client over HTTP.
const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
const { createServer } = require('@sluice/core');
require('@sluice/http');
const { concurrency } = require('@sluice/plugin-concurrency');
const { z } = require('zod');

async function main() {
  let entered;
  let release;
  const inside = new Promise((resolve) => (entered = resolve));
  const gate = new Promise((resolve) => (release = resolve));
  const server = createServer({
    name: 'consumer',
    version: '1.0.0',
    plugins: [concurrency({ tools: { slow: { maxActive: 1, maxQueue: 0 } } })],
  });
  server.tool({
    name: 'slow',
    inputSchema: z.object({ word: z.string() }),
    handler: async ({ word }) => {
      entered();
      await gate;
      return { content: [{ type: 'text', text: `said ${word}` }] };
    },
  });
  const { url } = await server.listen({ port: 0 });
  const client = new Client({ name: 'consumer-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  const first = client.callTool({ name: 'slow', arguments: { word: 'one' } });
  await inside;
  const second = await client.callTool({ name: 'slow', arguments: { word: 'two' } });
  release();
  const done = await first;
  await client.close();
  await server.close();
  const text = (result) => result.content.map((c) => c.text).join('');
  if (text(done) !== 'said one') throw new Error(`first call answered ${JSON.stringify(done)}`);
  if (!second.isError || !text(second).includes('SERVER_BUSY'))
    throw new Error(`second call was not refused: ${JSON.stringify(second)}`);
  console.log('ok');
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
