// Shared by the code-mode tests: tools to call from scripts, and what a script's run answers.
import { createRequire } from 'node:module';
import { expect } from 'vitest';
import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CallToolResult, SluiceServer } from '@sluice/core';
import { errorOf } from '@sluice/testing';

const require = createRequire(import.meta.url);

/** The CLI of the everything server: `node <it> stdio`. */
export const EVERYTHING = require
  .resolve('@modelcontextprotocol/server-everything/package.json')
  .replace(/package\.json$/, 'dist/index.js');

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** A local tool with structured output: an order's lines. */
export const orderLines = {
  name: 'order_lines',
  description: 'Returns the lines of an order.',
  inputSchema: z.object({ orderId: z.string() }),
  outputSchema: z.object({ lines: z.array(z.object({ sku: z.string(), qty: z.number() })) }),
  handler: ({ orderId }: { orderId: string }) => ({
    content: [{ type: 'text' as const, text: `order ${orderId}` }],
    structuredContent: {
      lines: [
        { sku: 'A-1', qty: 2 },
        { sku: 'B-7', qty: 3 },
      ],
    },
  }),
};

/** A local tool with text output. */
export const price = {
  name: 'price',
  description: 'Returns the unit price of a product, in cents, as text.',
  inputSchema: z.object({ sku: z.string() }),
  handler: ({ sku }: { sku: string }) => text(sku === 'A-1' ? '150' : '40'),
};

export const ping = { name: 'ping', handler: () => text('pong') };

/** What a script returned, after checking that it ran. */
export function resultOf(result: CallToolResult): unknown {
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  return (result.structuredContent as { result: unknown }).result;
}

/** The code a script was stopped or failed with. */
export function stoppedWith(result: CallToolResult): string | undefined {
  expect(result.isError).toBe(true);
  return errorOf(result)?.code;
}

/**
 * The local tools the pausing tests script: `write` (records its line in
 * `writes`), `report` (4 KiB of text), `quotes` (3,000 `"`, which JSON
 * writes as two bytes each, and a store as four) and `ask`, which asks its 2026-07-28
 * client a question and answers once the retry carries the answer with the
 * state it gave.
 */
export function registerPauseTools(server: SluiceServer, writes: string[]): void {
  server.tool({
    name: 'write',
    inputSchema: { type: 'object', properties: { line: { type: 'string' } } },
    handler: (args) => {
      writes.push(String(args.line));
      return { content: [{ type: 'text', text: `wrote ${writes.length}` }] };
    },
  });
  server.tool({ name: 'report', handler: () => ({ content: [{ type: 'text', text: 'r'.repeat(4_096) }] }) });
  server.tool({ name: 'quotes', handler: () => ({ content: [{ type: 'text', text: '"'.repeat(3_000) }] }) });
  server.tool({
    name: 'ask',
    handler: (_args, ctx) => {
      const answer = inputResponse(ctx.mcp?.mcpReq.inputResponses, 'who');
      if (answer.kind === 'elicit' && answer.action === 'accept' && ctx.mcp?.mcpReq.requestState() === 'ask-state')
        return { content: [{ type: 'text', text: `hello ${String(answer.content?.name)}` }] };
      const question = inputRequired.elicit({
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      });
      return inputRequired({ inputRequests: { who: question }, requestState: 'ask-state' });
    },
  });
}
