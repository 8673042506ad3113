import { afterEach, describe, expect, it } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import type { UpstreamConnection } from '@sluice/upstream';
import { captureLogger, textOf } from '@sluice/testing';
import { eventually } from '../../core/test/fixtures/upstream-helpers.js';
import '@sluice/http';
import '@sluice/upstream';

// Several clients' calls in flight on one upstream connection at once, each upstream asking its own caller a
// question during the call: which client is asked depends on what the connection can tell about the call a
// request serves.

const CALLERS = ['ada', 'bob', 'cy'];

/** A gate for `expected` calls: each call's `arrive()` resolves once all of them have arrived, so all are in flight. */
function allInFlight(expected: number): () => Promise<void> {
  let arrived = 0;
  let allIn!: () => void;
  const everyoneIn = new Promise<void>((resolve) => (allIn = resolve));
  return () => {
    if (++arrived === expected) allIn();
    return everyoneIn;
  };
}

/** An upstream whose `confirm` waits until `expected` calls are in, then each asks its client who it is. */
function askingUpstream(expected: number): SluiceServer {
  const server = createServer({ name: 'asker', version: '1.0.0', logger: captureLogger().logger });
  const arrive = allInFlight(expected);
  server.tool({
    name: 'confirm',
    handler: async (args, ctx) => {
      await arrive();
      // Sent as related to the call: over Streamable HTTP it travels on that call's answer stream.
      const answer = await ctx.mcp!.mcpReq.send({
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: `Who asked for ${String(args.ticket)}?`,
          requestedSchema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
        },
      });
      return { content: [{ type: 'text', text: `${String(args.ticket)} answered by ${String(answer.content?.who)}` }] };
    },
  });
  return server;
}

/** A client of the gateway that answers every elicitation with its own name, and counts them. */
async function caller(gateway: SluiceServer, name: string): Promise<{ client: Client; asked: () => number }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(serverSide);
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  let asked = 0;
  client.setRequestHandler('elicitation/create', () => {
    asked++;
    return { action: 'accept', content: { who: name } };
  });
  await client.connect(clientSide);
  return { client, asked: () => asked };
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function gatewayTo(connection: UpstreamConnection): Promise<SluiceServer> {
  const gateway = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
  cleanup.push(() => gateway.close());
  await gateway.import({ name: 'asker', connection });
  return gateway;
}

describe("an upstream's requests while several calls are in flight on its connection", () => {
  it('over Streamable HTTP, reach the client whose call each serves, and each answer goes back to its call', async () => {
    const upstream = askingUpstream(CALLERS.length);
    cleanup.push(() => upstream.close());
    const listener = await upstream.listen();
    const gateway = await gatewayTo({ type: 'http', url: listener.url.href });
    const clients = await Promise.all(CALLERS.map((name) => caller(gateway, name)));
    const results = await Promise.all(
      clients.map(({ client }, i) => client.callTool({ name: 'confirm', arguments: { ticket: `t${i}` } })),
    );
    expect(results.map((result) => textOf(result))).toEqual(CALLERS.map((name, i) => `t${i} answered by ${name}`));
    expect(clients.map(({ asked }) => asked())).toEqual(CALLERS.map(() => 1));
    for (const { client } of clients) await client.close();
  });

  it('over a connection that cannot tell which call a request serves, are refused rather than guessed', async () => {
    const upstream = askingUpstream(2);
    const gateway = await gatewayTo({ type: 'in-process', server: upstream });
    const clients = await Promise.all(['ada', 'bob'].map((name) => caller(gateway, name)));
    const results = await Promise.all(
      clients.map(({ client }, i) => client.callTool({ name: 'confirm', arguments: { ticket: `t${i}` } })),
    );
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/several calls of this upstream are in flight/);
    }
    expect(clients.map(({ asked }) => asked())).toEqual([0, 0]);
    for (const { client } of clients) await client.close();
  });
});

/**
 * An upstream whose `note` waits until `expected` calls are in, then logs a line about its ticket as part of
 * its call (over Streamable HTTP, on that call's answer stream), with a forged Sluice mark pointing elsewhere.
 */
function loggingUpstream(expected: number): SluiceServer {
  const server = createServer({ name: 'logger', version: '1.0.0', logger: captureLogger().logger });
  server.extendSdk((sdk) => sdk.server.registerCapabilities({ logging: {} }));
  const arrive = allInFlight(expected);
  server.tool({
    name: 'note',
    handler: async (args, ctx) => {
      await arrive();
      await ctx.mcp!.mcpReq.notify({
        method: 'notifications/message',
        params: { level: 'info', data: `about ${String(args.ticket)}`, _meta: { 'io.sluice/caller': '0', keep: 1 } },
      });
      return { content: [{ type: 'text', text: 'noted' }] };
    },
  });
  return server;
}

describe("an upstream's log messages while several calls are in flight on its connection", () => {
  it("over Streamable HTTP, each reaches only the client whose call it belongs to, without Sluice's mark", async () => {
    const upstream = loggingUpstream(CALLERS.length);
    cleanup.push(() => upstream.close());
    const listener = await upstream.listen();
    const gateway = await gatewayTo({ type: 'http', url: listener.url.href });
    const clients = await Promise.all(
      CALLERS.map(async (name) => {
        const { client } = await caller(gateway, name);
        const logs: { data: unknown; _meta?: Record<string, unknown> }[] = [];
        client.setNotificationHandler('notifications/message', (n) => void logs.push(n.params));
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
        await client.setLoggingLevel('debug');
        return { client, logs };
      }),
    );
    await Promise.all(
      clients.map(({ client }, i) => client.callTool({ name: 'note', arguments: { ticket: `t${i}` } })),
    );
    expect(clients.map(({ logs }) => logs.map((log) => log.data))).toEqual(CALLERS.map((_, i) => [`about t${i}`]));
    for (const { logs } of clients) expect(logs[0]?._meta).toEqual({ keep: 1 });
    for (const { client } of clients) await client.close();
  });

  it('over a connection that cannot tell which call one belongs to, reach no client rather than a guessed one', async () => {
    const upstream = loggingUpstream(2);
    const gateway = await gatewayTo({ type: 'in-process', server: upstream });
    const clients = await Promise.all(
      ['ada', 'bob'].map(async (name) => {
        const { client } = await caller(gateway, name);
        const logs: unknown[] = [];
        client.setNotificationHandler('notifications/message', (n) => void logs.push(n.params.data));
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
        await client.setLoggingLevel('debug');
        return { client, logs };
      }),
    );
    await Promise.all(
      clients.map(({ client }, i) => client.callTool({ name: 'note', arguments: { ticket: `t${i}` } })),
    );
    expect(clients.map(({ logs }) => logs)).toEqual([[], []]);
    for (const { client } of clients) await client.close();
  });
});

describe('an upstream that asks for roots at start, with no call in flight', () => {
  it('is answered with an error, logged at debug rather than as a warning on every clean start', async () => {
    // As the reference servers do: ask roots/list as soon as the session is initialized.
    const script = `
      const rl = require('node:readline').createInterface({ input: process.stdin });
      const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
      rl.on('line', (line) => {
        const m = JSON.parse(line);
        if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'rooty', version: '1' } } });
        else if (m.method === 'notifications/initialized') send({ id: 'roots-1', method: 'roots/list' });
        else if (m.id === 'roots-1') send({ method: 'notifications/message', params: { level: 'info', data: m.error ? 'refused' : 'answered' } });
        else if (m.method === 'tools/list') send({ id: m.id, result: { tools: [] } });
        else if (m.id !== undefined && m.method) send({ id: m.id, error: { code: -32601, message: 'no' } });
      });`;
    const logs = captureLogger();
    const gateway = createServer({ name: 'gateway', version: '1.0.0', logger: logs.logger });
    await gateway.import({
      name: 'rooty',
      connection: { type: 'stdio', command: process.execPath, args: ['-e', script] },
    });
    try {
      await eventually(() => logs.events('upstream.request_unrouted').length > 0, 'the roots/list refusal');
    } finally {
      await gateway.close();
    }
    const [record] = logs.events('upstream.request_unrouted');
    expect(record).toMatchObject({ method: 'roots/list', upstream: 'rooty', level: 20 });
    expect(logs.records.filter((r) => r.level >= 40)).toEqual([]);
  });
});
