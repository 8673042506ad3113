// The example in packages/core/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region core-adopt
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'; // or @modelcontextprotocol/server
import { adopt } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';

const server = new McpServer({ name: 'existing', version: '1.0.0' });
// ... server.registerTool(...) as before ...
adopt(server, [concurrency({ tools: { '*': { maxActive: 4 } } })]);
// #endregion core-adopt
