// The example in packages/plugin-chaining/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region quick-start
import { createServer } from '@sluice/core';
import { chaining, withNext } from '@sluice/plugin-chaining';
import { z } from 'zod';
import '@sluice/http';

const server = createServer({ name: 'bank', version: '1.0.0', plugins: [chaining({ maxDepth: 3 })] });
server.tool({
  name: 'check_account_issue',
  inputSchema: z.object({ customerId: z.string() }),
  handler: ({ customerId }) =>
    withNext({ content: [{ type: 'text', text: 'Needs a specialist.' }] }, 'initiate_human_handoff', {
      customerId,
      urgency: 'high',
    }),
});
server.tool({
  name: 'initiate_human_handoff',
  inputSchema: z.object({ customerId: z.string(), urgency: z.enum(['low', 'high']) }),
  handler: ({ customerId }) => ({ content: [{ type: 'text', text: `Ticket opened for ${customerId}` }] }),
});
await server.listen({ port: 4001 });
// One tools/call of check_account_issue returns "Ticket opened for ...", with the chain in _meta.
// #endregion quick-start
