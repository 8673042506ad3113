import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { buildServer } from '../src/server.js';
import '@sluice/http';

describe('the bespoke inventory server', () => {
  it('serves local and imported tools to a real client over loopback HTTP', async () => {
    const server = await buildServer({ logger: captureLogger().logger });
    const listener = await server.listen();
    const client = new Client({ name: 'example-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'restock',
      'stock_level',
      'supplier_quote',
    ]);
    await client.callTool({ name: 'restock', arguments: { item: 'pear', units: 2 } });
    const level = await client.callTool({ name: 'stock_level', arguments: { item: 'pear' } });
    expect(textOf(level)).toBe('pear: 5');
    const quote = await client.callTool({ name: 'supplier_quote', arguments: { item: 'pear' } });
    expect(textOf(quote)).toBe('pear: 0.42 EUR per unit');
    await client.close();
    await server.close();
  });

  it('guards the imported tool like the local ones: a call that loops back is refused', async () => {
    const server = await buildServer({ logger: captureLogger().logger });
    // A call stack names a tool as the service that runs it does: the supplier calls it "quote".
    const looped = await server.call('supplier_quote', { item: 'x' }, { meta: { 'dev.sluice/callStack': ['quote'] } });
    expect(errorOf(looped)?.code).toBe('LOOP_DETECTED');
    await server.close();
  });
});
