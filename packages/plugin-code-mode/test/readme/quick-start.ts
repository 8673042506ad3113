// The example in packages/plugin-code-mode/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.

// #region quick-start
import { createServer } from '@sluice/core';
import { codeMode } from '@sluice/plugin-code-mode';
import '@sluice/http';
import '@sluice/upstream';

const server = createServer({
  name: 'gateway',
  version: '1.0.0',
  // Add the guards beside it: every call a script makes goes through them.
  plugins: [codeMode({ expose: 'meta-tools', limits: { timeoutMs: 10_000, maxToolCalls: 50 } })],
});
await server.import({
  name: 'desk',
  namespace: 'desk',
  connection: { type: 'stdio', command: 'node', args: ['desk.mjs'] },
});
await server.listen({ port: 3000 });
// #endregion quick-start
