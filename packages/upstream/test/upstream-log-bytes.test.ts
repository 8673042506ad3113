// An upstream's log messages during a call go to that call's client; they may be dropped, answers may not. A
// hostile upstream sending large messages to a client that does not read its answer stream used to fill the
// gateway's memory (1 MB messages at the relay rate: 887 MB in 15 s). Each message is bounded, and so is what
// one call's client is sent.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { createServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { MAX_LOG_BYTES_PER_CALL, MAX_LOG_MESSAGE_BYTES } from '../src/upstream-features.js';
import '../src/index.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close().catch(() => {});
});

/** An upstream whose `talk` tool logs one message of each given length (characters of data), in order. */
function talkingUpstream(): McpServer {
  const upstream = new McpServer({ name: 'talker', version: '1.0.0' }, { capabilities: { logging: {} } });
  upstream.registerTool(
    'talk',
    { inputSchema: z.object({ lengths: z.array(z.number().int()) }) },
    async ({ lengths }, ctx) => {
      for (const [i, length] of lengths.entries())
        await ctx.mcpReq.notify({
          method: 'notifications/message',
          params: { level: 'info', data: `${i}:`.padEnd(length, 'x') },
        });
      return { content: [{ type: 'text', text: 'done' }] };
    },
  );
  return upstream;
}

async function gateway() {
  const logs = captureLogger();
  const server = createServer({ name: 'gw', version: '1.0.0', logger: logs.logger });
  open.push(server);
  await server.import({ name: 'up', connection: { type: 'in-process', server: talkingUpstream() } });
  const client = new Client({ name: 'c', version: '1.0.0' });
  const heard: string[] = [];
  client.setNotificationHandler('notifications/message', (n) => void heard.push(String(n.params.data)));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  await client.connect(a);
  open.push(client);
  return { client, heard, logs };
}

/** The UTF-8 bytes of a log message's params as relayed. */
const bytesOf = (data: string) => Buffer.byteLength(JSON.stringify({ level: 'info', data }));

describe("an upstream's log messages during a call", () => {
  it(`are dropped when one is over ${MAX_LOG_MESSAGE_BYTES} bytes; smaller ones around it still go`, async () => {
    const { client, heard, logs } = await gateway();
    const small = 100;
    const large = MAX_LOG_MESSAGE_BYTES + 1;
    await client.callTool({ name: 'talk', arguments: { lengths: [small, large, small] } });
    expect(heard.map((data) => data.split(':')[0])).toEqual(['0', '2']);
    expect(logs.events('upstream.log_too_large')).toEqual([
      expect.objectContaining({ upstream: 'up', max: MAX_LOG_MESSAGE_BYTES }),
    ]);
  });

  it(`reach one call's client up to ${MAX_LOG_BYTES_PER_CALL} bytes; the rest of that call's are dropped`, async () => {
    const { client, heard, logs } = await gateway();
    const length = 60_000;
    const lengths = Array.from({ length: 40 }, () => length);
    await client.callTool({ name: 'talk', arguments: { lengths } });
    const each = bytesOf(`0:`.padEnd(length, 'x'));
    const fit = Math.floor(MAX_LOG_BYTES_PER_CALL / each);
    expect(heard).toHaveLength(fit);
    expect(logs.events('upstream.call_logs_dropped')).toEqual([
      expect.objectContaining({ upstream: 'up', max: MAX_LOG_BYTES_PER_CALL }),
    ]);
    // The next call has a budget of its own.
    await client.callTool({ name: 'talk', arguments: { lengths: [10] } });
    expect(heard).toHaveLength(fit + 1);
  });

  it('relay exactly what the two bounds admit, for any run of message sizes (fast-check)', async () => {
    // Sizes around both bounds: small lines, lines near 64 KiB on either side, and enough of them to pass 1 MiB.
    const length = fc.oneof(
      fc.integer({ min: 3, max: 2_000 }),
      fc.integer({ min: MAX_LOG_MESSAGE_BYTES - 100, max: MAX_LOG_MESSAGE_BYTES + 100 }),
      fc.integer({ min: 20_000, max: 60_000 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(length, { minLength: 1, maxLength: 60 }), async (lengths) => {
        const { client, heard } = await gateway();
        await client.callTool({ name: 'talk', arguments: { lengths } });
        // The model: too large is dropped; the rest go until the next would pass the call's budget, then none.
        const expected: string[] = [];
        let spent = 0;
        for (const [i, n] of lengths.entries()) {
          const data = `${i}:`.padEnd(n, 'x');
          const bytes = bytesOf(data);
          if (bytes > MAX_LOG_MESSAGE_BYTES) continue;
          if (spent + bytes > MAX_LOG_BYTES_PER_CALL) break;
          spent += bytes;
          expected.push(data);
        }
        expect(heard).toEqual(expected);
        for (const thing of open.splice(0).reverse()) await thing.close();
      }),
      { numRuns: 15 },
    );
  });
});
