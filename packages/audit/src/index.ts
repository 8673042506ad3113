// The public API of @sluice/audit, listed by name: anything exported here is public.
// Importing this package makes every Sluice server's `services.audit` the hash-chained log in its store.

import { provideAuditing } from '@sluice/core/internal';
import type { AuditPage } from '@sluice/core';
import { AuditLog } from './audit-log.js';
import type { AuditVerification } from './audit-chain.js';

provideAuditing({
  create: (records, clock, logger, options, store) => new AuditLog(records, clock, logger, options, store),
});

declare module '@sluice/core' {
  interface Audit {
    /** Up to `limit` (default 1 000, at most `MAX_AUDIT_PAGE`) entries numbered above `after`, as stored. */
    read(after?: number, limit?: number): Promise<AuditPage>;
    /** Checks the whole kept chain: every modified, missing, moved or unreadable entry. */
    verify(): Promise<AuditVerification>;
  }
  interface AuditOptions {
    /** One upstream's budget of the entries it causes (`ledger.held`): at most `maxEntries` (default 60) per `windowMs` (default 60 000). */
    perUpstream?: { maxEntries?: number; windowMs?: number };
  }
}

export { AuditEventSchema, AuditLog, AuditOptions, MAX_AUDIT_FIELD_CHARS, MAX_AUDIT_PAGE } from './audit-log.js';
export { AuditChainCheck, auditHash } from './audit-chain.js';
export type { AuditFields, AuditProblem, AuditProblemKind, AuditVerification } from './audit-chain.js';
export { AuditKind } from '@sluice/core';
export type { Audit, AuditEntry, AuditEvent } from '@sluice/core';
export { VERSION } from './version.js';
