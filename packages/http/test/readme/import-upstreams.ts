// The example in packages/core/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
import type { McpServer } from '@modelcontextprotocol/server';
import '@sluice/http';
import '@sluice/upstream';

declare const token: string;
declare const myMcpServer: McpServer;

// #region import-upstreams
import { createServer } from '@sluice/core';
import { requestFilter } from '@sluice/upstream';

const server = createServer({ name: 'gateway', version: '1.0.0', plugins: [requestFilter()] });
await server.import({
  name: 'files',
  namespace: 'fs',
  connection: { type: 'stdio', command: 'mcp-files', args: ['/srv'] },
  denyTools: ['delete*'],
});
await server.import({
  name: 'search',
  connection: { type: 'http', url: 'https://search.example/mcp', headers: { authorization: `Bearer ${token}` } },
});
await server.import({ name: 'local', connection: { type: 'in-process', server: myMcpServer } });
const { imported, skipped } = await server.import({
  name: 'old',
  connection: { type: 'sse', url: 'http://127.0.0.1:9000/sse' },
});
await server.listen({ port: 3000 });
// #endregion import-upstreams
export { imported, skipped };
