// #region options
import { z } from 'zod';
import { PluginModeSchema } from '@sluice/core';

/** Options of the audit-trail plugin; the type is inferred from the schema. */
export const AuditTrailOptions = z.object({
  /** The JSONL file every call is appended to. */
  file: z.string().min(1),
  /** Record the call's arguments too (off by default: they may hold personal data). */
  includeArguments: z.boolean().default(false),
  mode: PluginModeSchema.default('enforce'),
});
export type AuditTrailOptions = z.input<typeof AuditTrailOptions>;
// #endregion options
