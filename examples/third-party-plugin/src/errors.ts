// #region errors
/** Every code this plugin raises. */
export const AuditTrailErrorCode = Object.freeze({
  /** The audit file cannot be written: calls are refused rather than left unrecorded. */
  AUDIT_UNAVAILABLE: 'AUDIT_UNAVAILABLE',
} as const);
// #endregion errors
