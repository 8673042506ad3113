import { z } from 'zod';
import { PluginModeSchema, ToolSelectorSchema } from '@sluice/core';

/** The smallest limit accepted: below it, the intervention message alone would not fit. */
export const MIN_PAYLOAD_BYTES = 1_024;

const PayloadBytes = z.number().int().min(MIN_PAYLOAD_BYTES).max(Number.MAX_SAFE_INTEGER);

/** A limit for one tool: on a local tool's `policy.egress`, or for a pattern in `tools`. */
export const EgressPolicy = z.strictObject({
  /** The most bytes a result of this tool may carry to the model (at least 1,024). */
  maxPayloadBytes: PayloadBytes.describe(
    'The most bytes (at least 1,024) one result of this tool may carry to the model; a larger result is cut to fit and ends with an instruction to paginate.',
  ),
});
export type EgressPolicy = z.infer<typeof EgressPolicy>;

// Local tools set their own limit: `server.tool({ ..., policy: { egress: { maxPayloadBytes: 65_536 } } })`.
declare module '@sluice/core' {
  interface ToolPolicy {
    /** The egress guard's limit for this tool; wins over patterns and the server-wide limit. */
    egress?: EgressPolicy;
  }
}

export const EgressOptions = z.strictObject({
  /** The limit for every tool that has no limit of its own. Absent: only tools with a policy or a pattern are limited. */
  maxPayloadBytes: PayloadBytes.optional().describe(
    'The limit in bytes (at least 1,024) for every tool that has no limit of its own; it also caps the `resources/read`, `prompts/get` and `completion/complete` answers of imported upstreams, and reads none past 4 times the limit. Absent: only tools with a policy or an entry in `tools` are limited.',
  ),
  /** Limits by tool name or selector (`github_*`, `github/search_*`), for tools imported from upstream servers. */
  tools: z
    .record(ToolSelectorSchema, EgressPolicy)
    .optional()
    .describe(
      'Limits by tool name or tool selector (`github_*`, `github/search_*`), for tools imported from upstream servers.',
    ),
  mode: PluginModeSchema.default('enforce'),
});
export type EgressOptions = z.input<typeof EgressOptions>;
export type ParsedEgressOptions = z.output<typeof EgressOptions>;
