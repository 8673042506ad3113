import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CoreErrorCode, createServer } from '@sluice/core';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { askingTool } from '../../core/test/fixtures/asking-tool.js';
import '@sluice/http';
import '@sluice/upstream';

// A 2026-07-28 client, the gateway, and an upstream whose tools answer "input required", all over real loopback HTTP.

const STATE = 'upstream-own-state';

function upstream(): SluiceServer {
  const server = createServer({ name: 'asker', version: '1.0.0', logger: captureLogger().logger });
  for (const name of ['ask', 'other']) server.tool(askingTool(name, STATE));
  return server;
}

function modernClient(autoFulfill: boolean): Client {
  const client = new Client(
    { name: 'modern', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill },
    },
  );
  client.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { name: 'Ada' } }));
  return client;
}

let up: SluiceServer;
let upListener: HttpListener;
let gateway: SluiceServer;
let listener: HttpListener;

beforeAll(async () => {
  up = upstream();
  upListener = await up.listen();
  gateway = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
  await gateway.import({ name: 'asker', connection: { type: 'http', url: upListener.url.href } });
  listener = await gateway.listen();
});

afterAll(async () => {
  await gateway.close();
  await up.close();
});

describe("an upstream's input-required result crosses the gateway on 2026-07-28", () => {
  it('the client answers, and the retry reaches the upstream with its own state intact', async () => {
    const client = modernClient(true);
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    const result = await client.callTool({ name: 'ask', arguments: {} });
    expect(textOf(result)).toBe(`hello Ada (state ${STATE})`);
    await client.close();
  });

  it("seals the upstream's state so that the client cannot alter it or send it to another tool", async () => {
    const client = modernClient(false);
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    const first = (await client.callTool({ name: 'ask', arguments: {} }, { allowInputRequired: true })) as {
      resultType?: string;
      requestState?: string;
    };
    expect(first.resultType).toBe('input_required');
    expect(first.requestState).toBeDefined();
    expect(first.requestState).not.toContain(STATE);
    const answer = { who: { action: 'accept', content: { name: 'Eve' } } };
    const retry = (name: string, requestState: string) =>
      client.callTool({ name, arguments: {}, inputResponses: answer, requestState } as never, {
        allowInputRequired: true,
      });
    const altered = `${first.requestState!.slice(0, -2)}xx`;
    await expect(retry('ask', altered)).rejects.toMatchObject({ code: -32602 });
    await expect(retry('other', first.requestState!)).rejects.toMatchObject({ code: -32602 });
    expect(textOf(await retry('ask', first.requestState!))).toBe(`hello Eve (state ${STATE})`);
    await client.close();
  });
});

describe('a state sealed by one replica, answered on another', () => {
  const SECRET = 'a shared secret of at least thirty-two bytes';

  async function replica(secret?: string): Promise<{ server: SluiceServer; listener: HttpListener }> {
    const server = createServer({
      name: 'replica',
      version: '1.0.0',
      logger: captureLogger().logger,
      ...(secret === undefined ? {} : { roundStateSecret: secret }),
    });
    await server.import({ name: 'asker', connection: { type: 'http', url: upListener.url.href } });
    return { server, listener: await server.listen() };
  }

  /** Asks replica `first`, then answers on replica `second`. */
  async function acrossReplicas(first: HttpListener, second: HttpListener): Promise<unknown> {
    const asking = modernClient(false);
    await asking.connect(new StreamableHTTPClientTransport(first.url));
    const question = (await asking.callTool({ name: 'ask', arguments: {} }, { allowInputRequired: true })) as {
      requestState?: string;
    };
    await asking.close();
    const answering = modernClient(false);
    await answering.connect(new StreamableHTTPClientTransport(second.url));
    const answer = { who: { action: 'accept', content: { name: 'Grace' } } };
    try {
      return await answering.callTool(
        { name: 'ask', arguments: {}, inputResponses: answer, requestState: question.requestState } as never,
        { allowInputRequired: true },
      );
    } finally {
      await answering.close();
    }
  }

  it('is accepted when the replicas share a roundStateSecret, with the upstream state intact', async () => {
    const a = await replica(SECRET);
    const b = await replica(SECRET);
    const result = await await acrossReplicas(a.listener, b.listener);
    expect(textOf(result as never)).toBe(`hello Grace (state ${STATE})`);
    await a.server.close();
    await b.server.close();
  });

  it('is refused (-32602) when each replica keeps its own key', async () => {
    const a = await replica();
    const b = await replica();
    await expect(acrossReplicas(a.listener, b.listener)).rejects.toMatchObject({ code: -32602 });
    await a.server.close();
    await b.server.close();
  });

  it('refuses a roundStateSecret shorter than 32 bytes when the server is made', () => {
    const make = () =>
      createServer({ name: 'replica', version: '1.0.0', logger: captureLogger().logger, roundStateSecret: 'short' });
    expect(make).toThrow(/roundStateSecret/);
    expect(make).toThrow(expect.objectContaining({ code: CoreErrorCode.INVALID_OPTIONS }) as unknown);
  });
});

describe('an input-required round trip with a stdio upstream', () => {
  const fixture = fileURLToPath(new URL('../../stdio/test/fixtures/stdio-asker.ts', import.meta.url));
  const connection = {
    type: 'stdio' as const,
    command: process.execPath,
    args: ['--conditions=sluice:source', '--import', 'tsx', fixture],
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
  };

  async function gatewayTo(modernProcess: boolean): Promise<{ server: SluiceServer; listener: HttpListener }> {
    const server = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
    await server.import({ name: 'asker', connection: { ...connection, modernProcess } });
    return { server, listener: await server.listen() };
  }

  it('crosses a second process of the upstream when modernProcess is set, with its own state intact', async () => {
    const { server, listener } = await gatewayTo(true);
    const client = modernClient(true);
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    const result = await client.callTool({ name: 'ask', arguments: {} });
    expect(textOf(result)).toBe('hello Ada (state stdio-own-state)');
    await client.close();
    await server.close();
  });

  it('without it, reaches the one 2025-11-25 process, whose question the client cannot take', async () => {
    const { server, listener } = await gatewayTo(false);
    const client = modernClient(true);
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    // The one process speaks 2025-11-25: it asks with an elicitation request, which a 2026-07-28 client cannot take.
    const result = await client.callTool({ name: 'ask', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/elicitation\/create/);
    await client.close();
    await server.close();
  });
});
