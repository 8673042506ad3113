import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { MemoryStore, createServer } from '@sluice/core';
import type { CallToolResult, HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import type { CapturedLogger } from '@sluice/testing';
import { concurrency } from '@sluice/plugin-concurrency';
import type { ConcurrencyOptions } from '@sluice/plugin-concurrency';
import { Occupancy, gate, idle, slotsOf, text, until } from './support.js';
import '@sluice/http';

interface Running {
  server: SluiceServer;
  listener: HttpListener;
  client: Client;
  store: MemoryStore;
  logs: CapturedLogger;
}

const running: Running[] = [];

afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.client.close();
    await r.listener.close();
    await r.server.close();
  }
});

async function serve(options: ConcurrencyOptions, register: (server: SluiceServer) => void): Promise<Running> {
  const store = new MemoryStore();
  const logs = captureLogger();
  const server = createServer({
    name: 'e2e',
    version: '1.0.0',
    store,
    logger: logs.logger,
    plugins: [concurrency(options)],
  });
  register(server);
  const listener = await server.listen();
  const client = new Client({ name: 'e2e-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(listener.url));
  const r = { server, listener, client, store, logs };
  running.push(r);
  return r;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  await client.callTool({ name, arguments: args });

describe('over Streamable HTTP with a real SDK client', () => {
  it('admits exactly 25 of 200 simultaneous calls when 5 may run and 20 wait, sheds 175, then serves normally', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const { client, store } = await serve({ tools: { 'reports.*': { maxActive: 5, maxQueue: 20 } } }, (server) =>
      server.tool({
        name: 'reports.build',
        annotations: { readOnlyHint: true },
        inputSchema: z.object({ i: z.number() }),
        handler: ({ i }) => occupancy.during(i, async () => (await door.opened, text(`report ${i}`))),
      }),
    );
    const calls = Array.from({ length: 200 }, (_, i) => call(client, 'reports.build', { i }));
    const outcomes: CallToolResult[] = [];
    for (const c of calls) void c.then((r) => outcomes.push(r));
    await until(() => outcomes.length === 175, 200_000);
    expect(outcomes.every((r) => errorOf(r)?.code === 'SERVER_BUSY')).toBe(true);
    expect(outcomes.every((r) => errorOf(r)?.active === 5 && errorOf(r)?.queued === 20)).toBe(true);
    expect(occupancy.started).toBe(5);
    door.open();
    const all = await Promise.all(calls);
    const served = all.filter((r) => !r.isError);
    expect(served).toHaveLength(25);
    expect(all.filter((r) => errorOf(r)?.code === 'SERVER_BUSY')).toHaveLength(175);
    expect(occupancy.peak).toBe(5);
    expect(idle(slotsOf(store, 'reports.build', { maxActive: 5, maxQueue: 20 }))).toBe(true);

    const after = await Promise.all(
      Array.from({ length: 25 }, (_, i) => call(client, 'reports.build', { i: 1000 + i })),
    );
    expect(after.map(textOf)).toEqual(Array.from({ length: 25 }, (_, i) => `report ${1000 + i}`));
  });

  it('lets a waiting call leave the line when the client cancels it over HTTP, without running it', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const limit = { maxActive: 1, maxQueue: 3 };
    const { client, store } = await serve({ tools: { export: limit } }, (server) =>
      server.tool({
        name: 'export',
        annotations: { readOnlyHint: true },
        inputSchema: z.object({ i: z.number() }),
        handler: ({ i }) => occupancy.during(i, async () => (await door.opened, text(`export ${i}`))),
      }),
    );
    const slots = () => slotsOf(store, 'export', limit);
    const first = call(client, 'export', { i: 0 });
    await until(() => occupancy.started === 1, 200_000);
    const controller = new AbortController();
    const cancelled = client
      .callTool({ name: 'export', arguments: { i: 1 } }, { signal: controller.signal })
      .catch((e: unknown) => e);
    const third = call(client, 'export', { i: 2 });
    await until(() => slots().queued === 2, 200_000);
    controller.abort();
    await until(() => slots().queued === 1, 200_000);
    expect(await cancelled).toBeInstanceOf(Error);
    door.open();
    expect((await Promise.all([first, third])).map(textOf)).toEqual(['export 0', 'export 2']);
    expect(occupancy.order).toEqual([0, 2]);
    expect(idle(slots())).toBe(true);
  });

  it('serializes refunds of one invoice and runs other invoices and read-only tools alongside', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const { client } = await serve({ mutex: { destructive: ['billing.refund'], keyArgs: ['invoiceId'] } }, (server) => {
      server.tool({
        name: 'billing.refund',
        inputSchema: z.object({ invoiceId: z.string() }),
        handler: ({ invoiceId }) =>
          occupancy.during(invoiceId, async () => (await door.opened, text(`refunded ${invoiceId}`))),
      });
      server.tool({
        name: 'billing.list',
        annotations: { readOnlyHint: true },
        handler: () => occupancy.during('list', async () => (await door.opened, text('listed'))),
      });
    });
    const calls = [
      call(client, 'billing.refund', { invoiceId: 'inv_1' }),
      call(client, 'billing.refund', { invoiceId: 'inv_1' }),
      call(client, 'billing.refund', { invoiceId: 'inv_2' }),
      call(client, 'billing.list', {}),
      call(client, 'billing.list', {}),
    ];
    await until(() => occupancy.started === 4, 200_000);
    expect(occupancy.order.filter((k) => k === 'inv_1')).toHaveLength(1);
    expect(occupancy.running).toBe(4);
    door.open();
    expect((await Promise.all(calls)).map(textOf)).toEqual([
      'refunded inv_1',
      'refunded inv_1',
      'refunded inv_2',
      'listed',
      'listed',
    ]);
    expect(occupancy.order.filter((k) => k === 'inv_1')).toHaveLength(2);
  });

  it('in audit mode lets a flood through and logs what it would have shed', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const { client, logs } = await serve({ mode: 'audit', default: { maxActive: 2, maxQueue: 3 } }, (server) =>
      server.tool({
        name: 'search',
        annotations: { readOnlyHint: true },
        handler: () => occupancy.during('search', async () => (await door.opened, text('found'))),
      }),
    );
    const calls = Array.from({ length: 12 }, () => call(client, 'search', {}));
    await until(() => occupancy.started === 12, 200_000);
    expect(logs.events('concurrency.would_shed')).toHaveLength(7);
    door.open();
    expect((await Promise.all(calls)).every((r) => textOf(r) === 'found')).toBe(true);
  });
});
