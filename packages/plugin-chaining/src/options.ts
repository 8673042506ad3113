import { z } from 'zod';
import { PluginModeSchema, ToolSelectorListSchema } from '@sluice/core';
import type { ChainStep } from './chain-record.js';

/** What decides which chains run: shared by the plugin and `callToolWithChaining`. */
const ChainRuleFields = {
  /** The most chained calls that may follow the call that started a chain. */
  maxDepth: z
    .number()
    .int()
    .min(1)
    .max(32)
    .default(5)
    .describe(
      'The most chained calls (1-32) that may follow the call that started a chain; the one that would exceed it is refused with `CHAIN_TOO_DEEP`.',
    ),
  /** Tool selectors: tools whose next-tool directive is followed, whether they start a chain or are a step of one. */
  tools: ToolSelectorListSchema.default(['*']).describe(
    "Tool selectors: tools whose next-tool directive is followed, whether they start a chain or are a step of one. Any other tool's directive is left in its result, for the client.",
  ),
  /** Tool selectors: tools a chain may call. */
  targets: ToolSelectorListSchema.default(['*']).describe(
    'Tool selectors: tools a chain may call. Any other is refused with `CHAIN_TARGET_DENIED` (it can still be called directly).',
  ),
};

/** Options of `chaining()`. */
export const ChainingOptions = z
  .object({
    mode: PluginModeSchema.default('enforce'),
    ...ChainRuleFields,
  })
  .strict();

export type ChainingOptions = z.input<typeof ChainingOptions>;
export type ChainingConfig = z.output<typeof ChainingOptions>;

/** Options of `callToolWithChaining()`. */
export const ClientChainingOptions = z
  .object({
    ...ChainRuleFields,
    /** Cancels the call in progress and every later step. */
    signal: z.instanceof(AbortSignal).optional(),
    /** Told about each chained call once it has ended (or been refused). */
    onStep: z
      .custom<(step: ChainStep) => void>((value) => typeof value === 'function', 'must be a function')
      .optional(),
  })
  .strict();

export type ClientChainingOptions = z.input<typeof ClientChainingOptions>;

/** The rule fields both sides read once options are parsed. */
export interface ChainRuleConfig {
  readonly maxDepth: number;
  readonly tools: readonly string[];
  readonly targets: readonly string[];
}
