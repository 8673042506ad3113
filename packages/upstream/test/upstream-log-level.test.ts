import { afterEach, describe, expect, it } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import '../src/index.js'; // gives every server import()

// A client's logging/setLevel through a gateway: it reaches the upstream, and the gateway relays only what the
// client asked for, as the upstream would directly.

/** An upstream with logging whose `say` logs one line at each of two levels, and which records the levels it was set to. */
function loggingUpstream(levels: string[]): McpServer {
  const server = new McpServer({ name: 'logs', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.server.setRequestHandler('logging/setLevel', (request) => {
    levels.push(request.params.level);
    return {};
  });
  server.registerTool('say', {}, async (ctx) => {
    await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'debug', data: 'chatter' } });
    await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'error', data: 'trouble' } });
    return { content: [{ type: 'text', text: 'said' }] };
  });
  return server;
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('logging/setLevel through a gateway', () => {
  it('reaches the upstream, and the client gets only messages at or above its level', async () => {
    const levels: string[] = [];
    const capture = captureLogger();
    const gateway: SluiceServer = createServer({ name: 'gateway', version: '1.0.0', logger: capture.logger });
    cleanup.push(() => gateway.close());
    await gateway.import({
      name: 'logs',
      namespace: 'logs',
      connection: { type: 'in-process', server: loggingUpstream(levels) },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await gateway.connect(serverSide);
    const client = new Client({ name: 'c', version: '1.0.0' });
    const received: unknown[] = [];
    client.setNotificationHandler('notifications/message', (n) => void received.push(n.params.data));
    await client.connect(clientSide);
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
    await client.setLoggingLevel('error');
    await client.callTool({ name: 'logs_say', arguments: {} });
    expect(received).toEqual(['trouble']);
    expect(levels).toContain('error');
    expect(capture.records.some((record) => record.event === 'gateway.feature_shadowed')).toBe(false);
    await client.close();
  });
});
