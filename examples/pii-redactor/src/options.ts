import { ToolSelectorListSchema, pluginOptions } from '@sluice/core';
import { z } from 'zod';

/** The kinds of personal data the redactor recognises. */
export const PiiPattern = z.enum(['email', 'phone']);
export type PiiPattern = z.infer<typeof PiiPattern>;

/** Options of the PII-redactor plugin; the type is inferred from the schema. */
export const PiiRedactorOptions = pluginOptions({
  /** Which kinds of personal data to redact (all by default). */
  patterns: z.array(PiiPattern).min(1).default(['email', 'phone']),
  /** Tool selectors the redactor applies to (all tools by default). */
  tools: ToolSelectorListSchema.min(1).optional(),
});
export type PiiRedactorOptions = z.input<typeof PiiRedactorOptions>;
