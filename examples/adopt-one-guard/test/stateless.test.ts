import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ForecastApi } from '../src/forecast.js';
import { statelessWeatherHttp } from '../src/stateless.js';

type Result = { isError?: boolean; _meta?: Record<string, unknown> };
const codeOf = (r: Result) => (r._meta?.['dev.sluice/error'] as { code?: string } | undefined)?.code;

/** A forecast API that holds every call until released, and says when one starts. */
function gatedApi(): ForecastApi & { started(count: number): Promise<void>; release(): void } {
  let running = 0;
  let peak = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const waiting: { count: number; resolve: () => void }[] = [];
  return {
    async forecast(city) {
      running++;
      peak = Math.max(peak, running);
      for (const w of waiting.filter((w) => peak >= w.count)) w.resolve();
      await gate;
      running--;
      return `${city}: sunny`;
    },
    get peak() {
      return peak;
    },
    started: (count) =>
      peak >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve })),
    release: () => open(),
  };
}

const servers: HttpServer[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

async function listening(server: HttpServer): Promise<URL> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
}

async function client(url: URL): Promise<Client> {
  const c = new Client({ name: 'agent', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(url));
  clients.push(c);
  return c;
}

describe('the v1 SDK stateless HTTP pattern (a new server per request)', () => {
  it('maxActive 1, maxQueue 0: one forecast runs, three concurrent clients are refused SERVER_BUSY', async () => {
    const api = gatedApi();
    const url = await listening(statelessWeatherHttp(api));
    const [first, ...others] = await Promise.all([1, 2, 3, 4].map(() => client(url)));
    const running = first!.callTool({ name: 'forecast', arguments: { city: 'Oslo' } });
    await api.started(1);
    const rest = Promise.all(
      others.map((c, i) => c.callTool({ name: 'forecast', arguments: { city: `c${i}` } }) as Promise<Result>),
    );
    // Unguarded, the three others reach the API too: release then, and let the assertions say so.
    await Promise.race([rest, api.started(4)]);
    api.release();
    const refused = await rest;
    expect(refused.map(codeOf)).toEqual(['SERVER_BUSY', 'SERVER_BUSY', 'SERVER_BUSY']);
    expect(((await running) as Result).isError).toBeFalsy();
    expect(api.peak).toBe(1);
  });
});
