import { describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as InMemoryV1 } from '@modelcontextprotocol/sdk/inMemory.js';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { slowForecastApi } from '../src/forecast.js';
import { guardedWeatherServer, weatherServer } from '../src/v1.js';
import { guardedWeatherServerV2 } from '../src/v2.js';

type Result = { content: { type: string; text?: string }[]; isError?: boolean; _meta?: Record<string, unknown> };
const codeOf = (r: Result) => (r._meta?.['dev.sluice/error'] as { code?: string } | undefined)?.code;

async function v1Client(server: { connect(t: InMemoryV1): Promise<void> }): Promise<ClientV1> {
  const [a, b] = InMemoryV1.createLinkedPair();
  await server.connect(b);
  const client = new ClientV1({ name: 'agent', version: '1' });
  await client.connect(a);
  return client;
}

describe('adopting one guard', () => {
  it('a v1 server: six forecasts at once give four answers and two SERVER_BUSY; the API sees at most two', async () => {
    const api = slowForecastApi();
    const { server, sluice } = guardedWeatherServer(api);
    const client = await v1Client(server);
    const results = (await Promise.all(
      ['Oslo', 'Lima', 'Pune', 'Kyiv', 'Rome', 'Nuuk'].map((city) =>
        client.callTool({ name: 'forecast', arguments: { city } }),
      ),
    )) as Result[];
    expect(results.filter((r) => !r.isError)).toHaveLength(4);
    expect(results.filter((r) => codeOf(r) === 'SERVER_BUSY')).toHaveLength(2);
    expect(api.peak).toBe(2);
    await client.close();
    await sluice.close();
  });

  it('a v1 server: its clients see the same tools and the same answers as before', async () => {
    const before = await v1Client(weatherServer(slowForecastApi(1)));
    const { server, sluice } = guardedWeatherServer(slowForecastApi(1));
    const after = await v1Client(server);
    expect((await after.listTools()).tools).toEqual((await before.listTools()).tools);
    const call = { name: 'forecast', arguments: { city: 'Oslo' } };
    expect(await after.callTool(call)).toEqual(await before.callTool(call));
    await before.close();
    await after.close();
    await sluice.close();
  });

  it('a v2 server gets the same guard', async () => {
    const api = slowForecastApi();
    const { server, sluice } = guardedWeatherServerV2(api);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(a);
    const results = (await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((city) => client.callTool({ name: 'forecast', arguments: { city } })),
    )) as Result[];
    expect(results.filter((r) => codeOf(r) === 'SERVER_BUSY')).toHaveLength(1);
    expect(api.peak).toBe(2);
    await client.close();
    await sluice.close();
  });
});
