// The example in packages/plugin-loop-guard/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region quick-start
import { createServer } from '@sluice/core';
import { loopGuard } from '@sluice/plugin-loop-guard';
import '@sluice/http';
import '@sluice/upstream';

const server = createServer({
  name: 'serviceA',
  version: '1.0.0',
  plugins: [loopGuard({ originService: 'serviceA', denyToolPrefix: 'serviceA.' })],
});
server.tool({ name: 'serviceA.run', handler: (args, ctx) => ctx.call('serviceB.work', args) });
const { skipped } = await server.import({
  name: 'serviceB',
  connection: { type: 'http', url: 'http://127.0.0.1:4002/mcp' },
});
// skipped: [{ name: 'serviceA.run', reason: 'Denied by denyToolPrefix (serviceA.)', by: 'loop-guard' }]
await server.listen({ port: 4001 });
// #endregion quick-start
export { skipped };
