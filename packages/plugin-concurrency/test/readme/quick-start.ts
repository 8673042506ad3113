import '@sluice/upstream';
// The example in packages/plugin-concurrency/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
declare const refunds: {
  create(
    invoiceId: string,
    options: { fence: number | undefined },
  ): Promise<{ content: { type: 'text'; text: string }[] }>;
};

// #region quick-start
import { createServer } from '@sluice/core';
import { concurrency, fencingToken } from '@sluice/plugin-concurrency';
import { z } from 'zod';

const server = createServer({
  name: 'billing',
  version: '1.0.0',
  plugins: [
    concurrency({
      tools: { 'stripe_*': { maxActive: 4, maxQueue: 8 } },
      mutex: { destructive: ['stripe_refund*'], keyArgs: ['invoiceId'] },
    }),
  ],
});
server.tool({
  name: 'refund',
  inputSchema: z.object({ invoiceId: z.string() }),
  policy: { concurrency: { maxActive: 5, maxQueue: 20 }, destructive: true, mutex: { keyArgs: ['invoiceId'] } },
  handler: async ({ invoiceId }, ctx) => refunds.create(invoiceId, { fence: fencingToken(ctx) }),
});
await server.import({
  name: 'stripe',
  namespace: 'stripe',
  connection: { type: 'http', url: 'http://127.0.0.1:4000/mcp' },
});
// #endregion quick-start
