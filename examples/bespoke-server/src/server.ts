import { z } from 'zod';
import { createServer } from '@sluice/core';
import type { Logger, Plugin, SluiceServer } from '@sluice/core';

export interface BuildOptions {
  plugins?: Plugin[];
  logger?: Logger;
}

/** A small inventory service: one read-only tool and one that changes state. */
export function buildServer(options: BuildOptions = {}): SluiceServer {
  const stock = new Map<string, number>([
    ['apple', 12],
    ['pear', 3],
  ]);
  const server = createServer({ name: 'inventory', version: '1.0.0', plugins: options.plugins ?? [], ...(options.logger ? { logger: options.logger } : {}) });

  server.tool({
    name: 'stock_level',
    description: 'How many units of an item are in stock.',
    inputSchema: z.object({ item: z.string().min(1) }),
    annotations: { readOnlyHint: true },
    handler: ({ item }) => ({ content: [{ type: 'text', text: `${item}: ${stock.get(item) ?? 0}` }] }),
  });

  server.tool({
    name: 'restock',
    description: 'Adds units of an item to the stock.',
    inputSchema: z.object({ item: z.string().min(1), units: z.number().int().positive() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    handler: ({ item, units }) => {
      stock.set(item, (stock.get(item) ?? 0) + units);
      return { content: [{ type: 'text', text: `${item}: ${stock.get(item)}` }] };
    },
  });

  return server;
}
