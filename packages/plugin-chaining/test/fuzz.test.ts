// Arbitrary next-tool values, from a local handler and from a plain server over the wire, never crash a call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@sluice/core';
import { MetaKey, createTestKit, errorOf, metaOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import type { ChainRecord } from '@sluice/plugin-chaining';
import { ChainingErrorCode, NEXT_TOOL_KEYS, callToolWithChaining, chaining } from '@sluice/plugin-chaining';
import { text } from './support.js';

const NAMES = ['emit', 'target', 'free', 'nowhere'] as const;
const CODES: readonly string[] = Object.values(ChainingErrorCode);

/** Directive-like values most of the time, anything at all the rest. */
const directive = (values: fc.Arbitrary<unknown>) =>
  fc.oneof(
    fc.record(
      {
        tool: fc.oneof(fc.constantFrom(...NAMES), fc.string()),
        arguments: fc.oneof(values, fc.dictionary(fc.string(), values)),
      },
      { requiredKeys: ['tool'] },
    ),
    values,
  );

/** How many fuzzed calls ran at least one chained call: the fuzzing must reach the chain, not only the parser. */
let chained = 0;

function expectWellFormed(result: CallToolResult): void {
  expect(Array.isArray(result.content)).toBe(true);
  if (metaOf<ChainRecord>(result, MetaKey.CHAIN)?.steps.some((s) => s.outcome !== 'refused')) chained++;
  const code = errorOf(result)?.code;
  if (code !== undefined) expect(CODES).toContain(code);
}

describe('fuzzing next-tool directives', () => {
  let emitted: Record<string, unknown> = {};
  let kit: TestKit;
  beforeAll(async () => {
    kit = await createTestKit({
      plugins: [chaining()],
      tools: [
        { name: 'emit', handler: () => ({ ...text('emitted'), _meta: emitted }) },
        {
          name: 'target',
          inputSchema: z.object({ n: z.number() }),
          handler: ({ n }: { n: number }) => text(`target:${n}`),
        },
        { name: 'free', handler: () => text('free') },
      ],
    });
  });
  afterAll(() => kit.close());

  it('the plugin turns any directive a handler returns into a result', async () => {
    chained = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...NEXT_TOOL_KEYS),
        directive(fc.anything({ withBigInt: true, withNullPrototype: true })),
        async (key, value) => {
          emitted = { [key]: value };
          // In process: nothing is serialized between the handler and the plugin.
          expectWellFormed(await kit.server.call('emit', {}));
        },
      ),
      { numRuns: 300 },
    );
    expect(chained).toBeGreaterThan(0);
  });

  it('the plugin handles any JSON directive behind a real client', async () => {
    chained = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...NEXT_TOOL_KEYS), directive(fc.jsonValue()), async (key, value) => {
        emitted = { [key]: value };
        expectWellFormed(await kit.call('emit', {}));
      }),
      { numRuns: 100 },
    );
    expect(chained).toBeGreaterThan(0);
  });

  it('callToolWithChaining survives any directive from an upstream', async () => {
    let fromUpstream: unknown;
    const server = new McpServer({ name: 'plain', version: '1.0.0' });
    server.registerTool('emit', {}, () => ({ ...text('emitted'), _meta: { nextTool: fromUpstream } }));
    server.registerTool('target', { inputSchema: z.object({ n: z.number() }) }, ({ n }) => text(`target:${n}`));
    server.registerTool('free', {}, () => text('free'));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'app', version: '1.0.0' });
    await client.connect(clientSide);
    chained = 0;
    await fc.assert(
      fc.asyncProperty(directive(fc.jsonValue()), async (value) => {
        fromUpstream = value;
        expectWellFormed(await callToolWithChaining(client, 'emit', {}));
      }),
      { numRuns: 100 },
    );
    expect(chained).toBeGreaterThan(0);
    await client.close();
    await server.close();
  });
});
