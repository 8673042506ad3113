// The example in packages/core/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region quick-start
import { z } from 'zod';
import { createServer, definePlugin, refusal, Stage } from '@sluice/core';
import '@sluice/http';

const business = definePlugin({
  name: 'business-hours',
  version: '1.0.0',
  apply({ hooks }) {
    hooks.preCall.tap({ name: 'business-hours', stage: Stage.RISK }, () =>
      new Date().getUTCHours() < 8
        ? refusal({ code: 'CLOSED', message: 'Payments run from 08:00 UTC.', suggestion: 'Try again later.' })
        : undefined,
    );
  },
});

const server = createServer({ name: 'payments', version: '1.0.0', plugins: [business] });
server.tool({
  name: 'pay',
  inputSchema: z.object({ to: z.string(), cents: z.number().int().positive() }),
  handler: async ({ to, cents }) => ({ content: [{ type: 'text', text: `paid ${cents} to ${to}` }] }),
});
await server.listen({ port: 3000 });
// #endregion quick-start
