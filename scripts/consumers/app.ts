// A TypeScript consumer (compiled under the module setting of its folder): one guard in front of one tool, called by a real client over HTTP.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';
import { z } from 'zod';
import '@sluice/http';

async function main(): Promise<void> {
  let entered = (): void => undefined;
  let release = (): void => undefined;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
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
  const text = (result: Awaited<ReturnType<Client['callTool']>>): string =>
    (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('');
  if (text(done) !== 'said one') throw new Error(`first call answered ${JSON.stringify(done)}`);
  if (!second.isError || !text(second).includes('SERVER_BUSY'))
    throw new Error(`second call was not refused: ${JSON.stringify(second)}`);
  console.log('ok');
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
