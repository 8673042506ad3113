import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/core/testing';
import { buildServer } from '../src/server.js';

describe('the bespoke inventory server', () => {
  it('serves its tools to a real client over loopback HTTP', async () => {
    const server = buildServer({ logger: captureLogger().logger });
    const listener = await server.listen();
    const client = new Client({ name: 'example-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['restock', 'stock_level']);
    await client.callTool({ name: 'restock', arguments: { item: 'pear', units: 2 } });
    const level = (await client.callTool({ name: 'stock_level', arguments: { item: 'pear' } })) as CallToolResult;
    expect(textOf(level)).toBe('pear: 5');
    await client.close();
    await server.close();
  });
});
