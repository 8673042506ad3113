// #region entry
export { auditTrail } from './plugin.js';
export { AuditTrailOptions } from './options.js';
export { AuditTrailErrorCode } from './errors.js';
export type { AuditRecord } from './writer.js';
// #endregion entry
