// The example in packages/stdio/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region quick-start
import { createServer } from '@sluice/core';
import '@sluice/stdio';

const server = createServer({ name: 'notes', version: '1.0.0' });
// server.tool({ ... })
await server.serveStdio();
// #endregion quick-start
