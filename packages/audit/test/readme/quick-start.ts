// The example in packages/audit/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region quick-start
import { AuditKind, createServer } from '@sluice/core';
import '@sluice/audit';

const server = createServer({ name: 'payments', version: '1.0.0', audit: { maxEntries: 50_000 } });
await server.services.audit.append({ kind: AuditKind.LEDGER_REVOKED, tool: 'pay', by: 'ops' });
const { ok, problems } = await server.services.audit.verify();
// #endregion quick-start
console.log(ok, problems);
