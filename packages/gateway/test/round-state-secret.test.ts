import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { createServer } from '@sluice/core';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { GatewayErrorCode, createGateway, parseGatewayConfig } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import '@sluice/http';

// Two gateway replicas from one config in front of the same upstream: a 2026-07-28 client asked by one replica
// answers on the other, as it may behind a load balancer that does not pin it.

const SECRET = 'a replica-wide secret of at least thirty-two bytes';

/** An upstream whose `ask` answers "input required" with its own state, then greets whoever answered. */
function askingUpstream(): SluiceServer {
  const server = createServer({ name: 'asker', version: '1.0.0', logger: captureLogger().logger });
  server.tool({
    name: 'ask',
    handler: (_args, ctx) => {
      const view = inputResponse(ctx.mcp?.mcpReq.inputResponses, 'who');
      if (view.kind === 'elicit' && view.action === 'accept')
        return { content: [{ type: 'text', text: `hello ${String(view.content?.name)}` }] };
      const ask = inputRequired.elicit({
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      });
      return inputRequired({ inputRequests: { who: ask }, requestState: 'the-upstream-state' });
    },
  });
  return server;
}

async function modernClient(url: URL): Promise<Client> {
  const client = new Client(
    { name: 'modern', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } },
  );
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

let upstream: SluiceServer;
let upstreamListener: HttpListener;
beforeAll(async () => {
  upstream = askingUpstream();
  upstreamListener = await upstream.listen();
});
afterAll(() => upstream.close());

async function replica(secret: string | undefined): Promise<{ gateway: Gateway; url: URL }> {
  const gateway = createGateway(
    {
      listen: { http: { port: 0 } },
      upstreams: [{ name: 'asker', connection: { type: 'http', url: upstreamListener.url.href } }],
      ...(secret === undefined ? {} : { roundStateSecret: secret }),
    },
    { logger: captureLogger().logger },
  );
  const { http } = await gateway.start();
  return { gateway, url: http!.url };
}

/** Asks on replica `first` and answers on `second`. */
async function askHereAnswerThere(first: URL, second: URL): Promise<unknown> {
  const asking = await modernClient(first);
  const question = (await asking.callTool({ name: 'ask', arguments: {} }, { allowInputRequired: true })) as {
    resultType?: string;
    requestState?: string;
  };
  await asking.close();
  expect(question.resultType).toBe('input_required');
  const answering = await modernClient(second);
  try {
    return await answering.callTool(
      {
        name: 'ask',
        arguments: {},
        inputResponses: { who: { action: 'accept', content: { name: 'Grace' } } },
        requestState: question.requestState,
      } as never,
      { allowInputRequired: true },
    );
  } finally {
    await answering.close();
  }
}

describe('roundStateSecret', () => {
  it('lets a replica answer an input-required state another replica sealed when both have it', async () => {
    const a = await replica(SECRET);
    const b = await replica(SECRET);
    try {
      expect(textOf((await askHereAnswerThere(a.url, b.url)) as never)).toBe('hello Grace');
    } finally {
      await a.gateway.close();
      await b.gateway.close();
    }
  });

  it('without it, each replica refuses the states of the others (-32602)', async () => {
    const a = await replica(undefined);
    const b = await replica(undefined);
    try {
      await expect(askHereAnswerThere(a.url, b.url)).rejects.toMatchObject({ code: -32602 });
    } finally {
      await a.gateway.close();
      await b.gateway.close();
    }
  });

  it('is refused in the config when shorter than 32 bytes', () => {
    const parse = () => parseGatewayConfig({ roundStateSecret: 'too short' });
    expect(parse).toThrow(/roundStateSecret/);
    expect(parse).toThrow(expect.objectContaining({ code: GatewayErrorCode.CONFIG_INVALID }) as unknown);
  });
});
