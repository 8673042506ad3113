// #region options
import { z } from 'zod';
import { pluginOptions } from '@sluice/core';

/**
 * Options of the audit-trail plugin; the type is inferred from the schema.
 * `pluginOptions()` adds `mode` and refuses an option it does not name.
 */
export const AuditTrailOptions = pluginOptions({
  /** The JSONL file every call is appended to. */
  file: z.string().min(1),
  /** Record the call's arguments too (off by default: they may hold personal data). */
  includeArguments: z.boolean().default(false),
});
export type AuditTrailOptions = z.input<typeof AuditTrailOptions>;
// #endregion options
