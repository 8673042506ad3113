import { z } from 'zod';
import { PluginModeSchema, ToolSelectorListSchema } from '@sluice/core';
import { MAX_STACK_ENTRIES } from './call-stack.js';

/** Letters, digits, `_`, `-` and `.`: no `/`, which separates a service from its tool in a stack entry. */
const SERVICE_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** The options of `loopGuard()`. */
export const LoopGuardOptions = z.strictObject({
  /** Upstream tools whose name (at the upstream) starts with one of these are not imported. */
  denyToolPrefix: z
    .union([z.string().min(1), z.array(z.string().min(1))])
    .optional()
    .describe('Upstream tools whose name (at the upstream) starts with one of these are not imported.'),
  /**
   * If set, only upstream tools these tool selectors select are imported, by
   * their name at the upstream: `get*`, `partner/delete*`, `!admin_*`.
   */
  allowTools: ToolSelectorListSchema.optional().describe(
    'If set, only upstream tools these tool selectors select are imported, by their name at the upstream: `get*`, `partner/delete*`, `!admin_*`.',
  ),
  /**
   * This service's name: recorded in outgoing `_meta["dev.sluice/origin"]`, and
   * qualifies this service's stack entries (`service/tool`, `service/resources/read <uri>`).
   */
  originService: z
    .string()
    .regex(SERVICE_NAME, 'use 1-100 letters, digits, "_", "-" or "." (no "/")')
    .optional()
    .describe(
      'This service\'s name: recorded in outgoing `_meta["dev.sluice/origin"]`, and qualifies this service\'s stack entries (`service/tool`, `service/resources/read <uri>`).',
    ),
  /** The most entries a call stack may hold (tool calls, relays of a client's call and other requests), this one included. */
  maxDepth: z
    .number()
    .int()
    .min(1)
    .max(MAX_STACK_ENTRIES)
    .default(16)
    .describe(
      "The most entries a call stack may hold (tool calls, relays of a client's call and other requests), this one included.",
    ),
  mode: PluginModeSchema.default('enforce'),
});

export type LoopGuardOptions = z.input<typeof LoopGuardOptions>;
export type LoopGuardConfig = z.output<typeof LoopGuardOptions>;
