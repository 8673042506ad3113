import { z } from 'zod';
import { createServer } from '@sluice/core';
import type { Logger, SluiceServer } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';
import { egress } from '@sluice/plugin-egress';
import { loopGuard } from '@sluice/plugin-loop-guard';
import { supplierServer } from './supplier.js';
import '@sluice/upstream';

export interface BuildOptions {
  logger?: Logger;
}

/**
 * An inventory service assembled from local tools, one imported upstream
 * and three plugins.
 */
export async function buildServer(options: BuildOptions = {}): Promise<SluiceServer> {
  const stock = new Map<string, number>([
    ['apple', 12],
    ['pear', 3],
  ]);
  // #region compose
  const server = createServer({
    name: 'inventory',
    version: '1.0.0',
    plugins: [loopGuard({ originService: 'inventory' }), concurrency(), egress({ maxPayloadBytes: 256_000 })],
    ...(options.logger ? { logger: options.logger } : {}),
  });

  server.tool({
    name: 'restock',
    description: 'Adds units of an item to the stock.',
    inputSchema: z.object({ item: z.string().min(1), units: z.number().int().positive() }),
    // Five restocks at once, twenty waiting; two of the same item never race.
    policy: { concurrency: { maxActive: 5, maxQueue: 20 }, destructive: true, mutex: { keyArgs: ['item'] } },
    handler: ({ item, units }) => {
      stock.set(item, (stock.get(item) ?? 0) + units);
      return { content: [{ type: 'text', text: `${item}: ${stock.get(item)}` }] };
    },
  });

  // Another team's server, behind the same guards as the local tools.
  await server.import({
    name: 'supplier',
    namespace: 'supplier',
    connection: { type: 'in-process', server: supplierServer() },
  });
  // #endregion compose

  server.tool({
    name: 'stock_level',
    description: 'How many units of an item are in stock.',
    inputSchema: z.object({ item: z.string().min(1) }),
    annotations: { readOnlyHint: true },
    handler: ({ item }) => ({ content: [{ type: 'text', text: `${item}: ${stock.get(item) ?? 0}` }] }),
  });
  return server;
}
