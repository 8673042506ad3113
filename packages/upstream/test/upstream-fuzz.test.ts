import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { CoreErrorCode, createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { connectClient } from '../../core/test/fixtures/upstream-helpers.js';
import '../src/index.js'; // gives every server import()

type Answer = { result: unknown } | { error: unknown };

/**
 * An upstream that speaks JSON-RPC correctly but answers `tools/list` and
 * `tools/call` with whatever the test scripts, as a broken or hostile server
 * might. It serves any number of connections.
 */
class ScriptedUpstream {
  list: Answer = { result: { tools: [{ name: 'tool', inputSchema: { type: 'object' } }] } };
  call: Answer = { result: { content: [] } };

  async connect(transport: Transport): Promise<void> {
    transport.onmessage = (message) => void this.answer(transport, message);
    await transport.start();
  }

  private async answer(transport: Transport, message: JSONRPCMessage): Promise<void> {
    if (!('method' in message) || !('id' in message)) return;
    const reply = (answer: Answer) =>
      // Through JSON, as on any wire.
      transport.send(JSON.parse(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...answer })) as JSONRPCMessage);
    if (message.method === 'initialize') {
      const version = (message.params as { protocolVersion?: string } | undefined)?.protocolVersion;
      return reply({
        result: {
          protocolVersion: version,
          capabilities: { tools: {} },
          serverInfo: { name: 'scripted', version: '1' },
        },
      });
    }
    if (message.method === 'tools/list') return reply(this.list);
    if (message.method === 'tools/call') return reply(this.call);
    return reply({ error: { code: -32601, message: 'no such method' } });
  }
}

const toolEntry = fc.oneof(
  fc.record(
    {
      name: fc.oneof(fc.constantFrom('ok', 'also_ok', 'bad name', ''), fc.string()),
      inputSchema: fc.oneof(fc.constant({ type: 'object' }), fc.jsonValue()),
      description: fc.jsonValue(),
      annotations: fc.jsonValue(),
    },
    { requiredKeys: ['name', 'inputSchema'] },
  ),
  fc.jsonValue(),
);
// Answers that are not JSON-RPC responses at all (a result that is not an object, a malformed error) are
// dropped by the SDK: the request then ends at its timeout. They are a smaller share, to keep the run short.
const listAnswer: fc.Arbitrary<Answer> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ result: fc.record({ tools: fc.array(toolEntry, { maxLength: 5 }) }) }) },
  { weight: 2, arbitrary: fc.record({ result: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }) }) },
  { weight: 1, arbitrary: fc.oneof(fc.record({ result: fc.jsonValue() }), fc.record({ error: fc.jsonValue() })) },
);

const content = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), fc.jsonValue()) }),
  fc.record({
    type: fc.constantFrom('image', 'audio', 'resource', 'unknown'),
    data: fc.jsonValue(),
    mimeType: fc.jsonValue(),
  }),
  fc.jsonValue(),
);
// `_meta` is left out: a result whose `_meta` is not an object is not a JSON-RPC response to the SDK (see below).
const fields = fc.dictionary(
  fc.string().filter((key) => key !== '_meta'),
  fc.jsonValue(),
  { maxKeys: 3 },
);

/** Answers the SDK recognises as JSON-RPC responses, with results and errors of every shape. */
const responseAnswer: fc.Arbitrary<Answer> = fc.oneof(
  fc.record({
    result: fc.record(
      {
        content: fc.array(content, { maxLength: 3 }),
        isError: fc.oneof(fc.boolean(), fc.jsonValue()),
        structuredContent: fc.jsonValue(),
      },
      { requiredKeys: ['content'] },
    ),
  }),
  fc.record({ result: fields }),
  fc.record({
    error: fc.record(
      { code: fc.integer(), message: fc.string(), data: fc.jsonValue() },
      { requiredKeys: ['code', 'message'] },
    ),
  }),
);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Answers that are not JSON-RPC responses at all: the SDK drops them, and the call can only end at its timeout. */
const nonResponseAnswer: fc.Arbitrary<Answer> = fc
  .oneof(fc.record({ result: fc.jsonValue() }), fc.record({ error: fc.jsonValue() }))
  .filter((answer) =>
    'result' in answer
      ? !isObject(answer.result)
      : !(isObject(answer.error) && Number.isInteger(answer.error.code) && typeof answer.error.message === 'string'),
  );

function gateway(): SluiceServer {
  const server = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
  server.tool({ name: 'local_ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
  return server;
}

const NEVER_RETRY = { initialDelayMs: 600_000, maxDelayMs: 600_000 };
// Short, so that answers the SDK drops end quickly; only such answers ever meet it.
const TIMEOUT_MS = 150;

describe('malformed upstream answers', () => {
  it('never crash an import: every tools/list answer ends in imported tools or reasons, and the server keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(listAnswer, async (answer) => {
        const upstream = new ScriptedUpstream();
        upstream.list = answer;
        const server = gateway();
        const result = await server.import({
          name: 'scripted',
          namespace: 'up',
          connection: { type: 'in-process', server: upstream },
          connectTimeoutMs: TIMEOUT_MS,
          retry: NEVER_RETRY,
        });
        const exposed = server.tools().map((t) => t.name);
        for (const name of result.imported) expect(exposed).toContain(name);
        for (const skipped of result.skipped) expect(skipped.reason.length).toBeGreaterThan(0);
        expect(['healthy', 'down']).toContain(server.upstreams()[0]?.health);

        const { client } = await connectClient(server);
        const listed = (await client.listTools()).tools.map((t) => t.name);
        expect(listed).toEqual(expect.arrayContaining(['local_ping', ...result.imported]));
        expect(textOf(await client.callTool({ name: 'local_ping', arguments: {} }))).toBe('pong');
        await client.close();
        await server.close();
      }),
      { numRuns: 100 },
    );
  });

  it('never crash a call: each tools/call response passes through as a direct client reads it, or ends in a clear upstream error', async () => {
    const upstream = new ScriptedUpstream();
    const server = gateway();
    await server.import({ name: 'scripted', connection: { type: 'in-process', server: upstream }, retry: NEVER_RETRY });
    const { client } = await connectClient(server);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await upstream.connect(serverSide);
    const direct = new Client({ name: 'direct', version: '1' });
    await direct.connect(clientSide);
    await direct.listTools();

    await fc.assert(
      fc.asyncProperty(responseAnswer, async (answer) => {
        upstream.call = answer;
        const expected = await direct.callTool({ name: 'tool', arguments: {} }).then(
          (result) => ({ ok: true as const, result }),
          () => ({ ok: false as const }),
        );
        const through = await client.callTool({ name: 'tool', arguments: {} });
        if (expected.ok) {
          expect(through).toEqual(expected.result);
        } else {
          expect(through.isError).toBe(true);
          expect([CoreErrorCode.UPSTREAM_INVALID_RESPONSE, CoreErrorCode.UPSTREAM_ERROR]).toContain(
            errorOf(through)?.code,
          );
          expect(textOf(through)).toMatch(/upstream "scripted"/i);
        }
        expect(server.upstreams()[0]?.health).toBe('healthy');
      }),
      { numRuns: 150 },
    );
    await direct.close();
    await client.close();
    await server.close();
  });

  it('end a call the SDK cannot even read as a response with UPSTREAM_TIMEOUT, and the server keeps serving', async () => {
    const upstream = new ScriptedUpstream();
    const server = gateway();
    await server.import({
      name: 'scripted',
      connection: { type: 'in-process', server: upstream },
      timeoutMs: TIMEOUT_MS,
      retry: NEVER_RETRY,
    });
    const { client } = await connectClient(server);
    await fc.assert(
      fc.asyncProperty(nonResponseAnswer, async (answer) => {
        upstream.call = answer;
        const through = await client.callTool({ name: 'tool', arguments: {} });
        expect(errorOf(through)).toMatchObject({ code: CoreErrorCode.UPSTREAM_TIMEOUT, upstream: 'scripted' });
        expect(textOf(await client.callTool({ name: 'local_ping', arguments: {} }))).toBe('pong');
      }),
      { numRuns: 10 },
    );
    await client.close();
    await server.close();
  });
});
