import '@sluice/upstream';
// The example in packages/plugin-egress/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
declare function searchLogs(): Promise<{ content: { type: 'text'; text: string }[] }>;

// #region quick-start
import { createServer } from '@sluice/core';
import { egress } from '@sluice/plugin-egress';

const server = createServer({
  name: 'warehouse',
  version: '1.0.0',
  plugins: [egress({ maxPayloadBytes: 2 * 1024 * 1024, tools: { 'github_*': { maxPayloadBytes: 256 * 1024 } } })],
});
server.tool({
  name: 'logs_search',
  policy: { egress: { maxPayloadBytes: 512 * 1024 } },
  handler: async () => searchLogs(),
});
await server.import({
  name: 'github',
  namespace: 'github',
  connection: { type: 'http', url: 'http://127.0.0.1:4000/mcp' },
});
// #endregion quick-start
