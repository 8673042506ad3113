// Shared by the code-mode tests: tools to call from scripts, and what a script's run answers.
import { createRequire } from 'node:module';
import { expect } from 'vitest';
import { z } from 'zod';
import type { CallToolResult } from '@sluice/core';
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
