// An upstream's requests to the client of the call it serves (elicitation, sampling, roots) are relayed, but
// a hostile upstream may send thousands at once: each one held for the client is memory the gateway keeps
// (its params, until the client reads them) and a prompt the client's person or model must answer. At most
// MAX_CLIENT_REQUESTS_PER_CALL are relayed at once per call; past it the upstream is refused on the spot.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { createServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { MAX_CLIENT_REQUESTS_PER_CALL, MAX_CLIENT_REQUEST_BYTES_PER_CALL } from '../src/upstream-features.js';
import '../src/index.js';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close().catch(() => {});
});

const METHODS = ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const;
type Method = (typeof METHODS)[number];

const PARAMS: Record<Method, Record<string, unknown>> = {
  'elicitation/create': { mode: 'form', message: 'q', requestedSchema: { type: 'object', properties: {} } },
  'sampling/createMessage': { messages: [{ role: 'user', content: { type: 'text', text: 'q' } }], maxTokens: 8 },
  'roots/list': {},
};

/** An upstream whose `ask` tool sends `count` requests of `method` at once and reports how each ended. */
function askingUpstream(): McpServer {
  const upstream = new McpServer({ name: 'asker', version: '1.0.0' });
  upstream.registerTool(
    'ask',
    { inputSchema: z.object({ method: z.enum(METHODS), count: z.number().int(), pad: z.number().int().optional() }) },
    async ({ method, count, pad }, ctx) => {
      // `pad` characters more in each request's params, under a key the client ignores.
      const params = pad === undefined ? PARAMS[method] : { ...PARAMS[method], _meta: { pad: 'x'.repeat(pad) } };
      const outcomes = await Promise.all(
        Array.from({ length: count }, () =>
          ctx.mcpReq.send({ method, params } as never).then(
            () => 'answered',
            (error: unknown) => `refused:${(error as Error).message}`,
          ),
        ),
      );
      return { content: [{ type: 'text', text: JSON.stringify(outcomes) }] };
    },
  );
  return upstream;
}

/** A client whose person answers nothing until released, counting the most questions it held at once. */
function heldClient() {
  const client = new Client(
    { name: 'slow', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} } },
  );
  const state = { held: 0, most: 0, waiting: [] as Array<() => void> };
  const hold = async <T>(answer: T): Promise<T> => {
    state.held++;
    state.most = Math.max(state.most, state.held);
    await new Promise<void>((resolve) => state.waiting.push(resolve));
    state.held--;
    return answer;
  };
  client.setRequestHandler('elicitation/create', () => hold({ action: 'decline' as const }));
  client.setRequestHandler('sampling/createMessage', () =>
    hold({ role: 'assistant' as const, content: { type: 'text' as const, text: 'a' }, model: 'm' }),
  );
  client.setRequestHandler('roots/list', () => hold({ roots: [] }));
  return { client, state };
}

/** A server importing the asking upstream, and a held client connected to it. */
async function gatewayWithAsker() {
  const logs = captureLogger();
  const server = createServer({ name: 'gw', version: '1.0.0', logger: logs.logger });
  open.push(server);
  await server.import({ name: 'up', connection: { type: 'in-process', server: askingUpstream() } });
  const { client, state } = heldClient();
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  await client.connect(a);
  open.push(client);
  return { client, state, logs };
}

describe("an upstream's requests to its caller's client", () => {
  it(`are relayed at most ${MAX_CLIENT_REQUESTS_PER_CALL} at once per call; the rest are refused to the upstream`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...METHODS),
        fc.oneof(fc.integer({ min: 1, max: MAX_CLIENT_REQUESTS_PER_CALL }), fc.integer({ min: 17, max: 120 })),
        async (method, count) => {
          const { client, state, logs } = await gatewayWithAsker();

          const relayed = Math.min(count, MAX_CLIENT_REQUESTS_PER_CALL);
          const call = client.callTool({ name: 'ask', arguments: { method, count } });
          await expect.poll(() => state.waiting.length).toBe(relayed);
          // Every request past the bound was refused as it came, so the upstream's count is settled: answer the rest.
          for (const release of state.waiting.splice(0)) release();
          const result = await call;
          const outcomes = JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? '[]') as string[];
          expect(outcomes.filter((o) => o === 'answered')).toHaveLength(relayed);
          const refused = outcomes.filter((o) => o.startsWith('refused:'));
          expect(refused).toHaveLength(count - relayed);
          for (const why of refused) expect(why).toContain(`at most ${MAX_CLIENT_REQUESTS_PER_CALL}`);
          expect(state.most).toBe(relayed);
          expect(logs.events('upstream.requests_refused')).toEqual(
            count > relayed
              ? [expect.objectContaining({ upstream: 'up', method, max: MAX_CLIENT_REQUESTS_PER_CALL })]
              : [],
          );
          for (const thing of open.splice(0).reverse()) await thing.close();
        },
      ),
      { numRuns: 8 },
    );
  });

  it(`are relayed up to ${MAX_CLIENT_REQUEST_BYTES_PER_CALL} bytes at once per call; a larger one is refused`, async () => {
    const { client, state } = await gatewayWithAsker();
    const pad = Math.floor(MAX_CLIENT_REQUEST_BYTES_PER_CALL / 3);
    const call = client.callTool({ name: 'ask', arguments: { method: 'elicitation/create', count: 5, pad } });
    // Two fit beside each other (a third would pass the bound with the params around the padding).
    await expect.poll(() => state.waiting.length).toBe(2);
    for (const release of state.waiting.splice(0)) release();
    const outcomes = JSON.parse(((await call).content as Array<{ text: string }>)[0]?.text ?? '[]') as string[];
    expect(outcomes.filter((o) => o === 'answered')).toHaveLength(2);
    const refused = outcomes.filter((o) => o.startsWith('refused:'));
    expect(refused).toHaveLength(3);
    for (const why of refused) expect(why).toContain(`at most ${MAX_CLIENT_REQUEST_BYTES_PER_CALL} bytes`);
    // One request larger than the bound is refused on its own.
    const alone = await client.callTool({
      name: 'ask',
      arguments: { method: 'sampling/createMessage', count: 1, pad: MAX_CLIENT_REQUEST_BYTES_PER_CALL },
    });
    expect((alone.content as Array<{ text: string }>)[0]?.text).toContain('refused:');
    expect(state.waiting).toHaveLength(0);
  });
});
