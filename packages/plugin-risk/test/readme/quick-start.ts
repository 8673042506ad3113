// The example in packages/plugin-risk/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region quick-start
import { createServer } from '@sluice/core';
import { risk } from '@sluice/plugin-risk';
import '@sluice/upstream';

const guard = risk({
  policy: 'block',
  maxRisk: 'L4',
  servers: {
    tracker: { transport: 'http', url: 'https://mcp.example.com/mcp', auth: { kind: 'oauth' }, catalog: 'example' },
  },
  catalog: [
    { id: 'example', trust: 'vendor-official', hosts: ['*.example.com'], docs: { url: 'https://docs.example.com' } },
  ],
  tools: [{ match: 'delete_issue', server: 'tracker', hitl: true, alias: 'tracker_delete_issue' }],
  approval: { defaultFromLevel: 'L4', autoExecute: ['search_*'], secret: process.env.SLUICE_APPROVAL_KEY },
  secrets: [process.env.TRACKER_TOKEN ?? ''],
  ledger: { path: '/var/lib/sluice/risk-ledger.json' },
});
const server = createServer({ name: 'gateway', version: '1.0.0', plugins: [guard] });
await server.import({
  name: 'tracker',
  connection: {
    type: 'http',
    url: 'https://mcp.example.com/mcp',
    headers: { authorization: `Bearer ${process.env.TRACKER_TOKEN}` },
  },
});
await guard.approveRereview('tracker', 'create_issue'); // after reviewing a changed definition
// #endregion quick-start
