import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { createServer } from '@sluice/core';

describe('smoke', () => {
  it('calls a tool in-process', async () => {
    const server = createServer({ name: 's', version: '1' });
    server.tool({ name: 'echo', inputSchema: z.object({ text: z.string() }), handler: ({ text }) => ({ content: [{ type: 'text', text }] }) });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(a);
    const r = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(r.content).toEqual([{ type: 'text', text: 'hi' }]);
    await client.close();
    await server.close();
  });
});
