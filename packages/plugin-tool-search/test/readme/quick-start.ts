// The example in packages/plugin-tool-search/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.

// #region quick-start
import { createServer } from '@sluice/core';
import { toolSearch } from '@sluice/plugin-tool-search';
import '@sluice/http';

const server = createServer({
  name: 'gateway',
  version: '1.0.0',
  // tools/list now shows search_tools, describe_tools and `help`; every other tool is found by search.
  plugins: [toolSearch({ alwaysVisible: ['help'], defaultLimit: 5 })],
});
await server.listen({ port: 3000 });
// #endregion quick-start
