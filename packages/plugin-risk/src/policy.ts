import { z } from 'zod';
import { globMatch } from './glob.js';
import { SideEffectSchema } from './tool-risk.js';
import type { ToolTraits } from './tool-risk.js';

/** Per-tool settings for local tools, on `server.tool({ policy: { risk: {...} } })`. */
export interface RiskToolPolicy {
  /**
   * A person approves each call. Recorded and published now; it lowers the
   * level by one band only once an approval gate enforces it.
   */
  readonly hitl?: boolean;
}

declare module '@sluice/core' {
  interface ToolPolicy {
    risk?: RiskToolPolicy;
  }
}

/** Settings for imported tools, by tool-name glob (matched against the exposed and the upstream name). */
export const ToolRuleSchema = z
  .object({
    /** A glob on the tool name: `*` any run, `?` one character. */
    match: z.string().min(1),
    /** Only tools of this upstream (its configured name). */
    server: z.string().min(1).optional(),
    /** A person approves each call (see `RiskToolPolicy.hitl`). */
    hitl: z.boolean().optional(),
    /** What the tool does remotely, beyond its annotations. */
    sideEffect: SideEffectSchema.optional(),
    /** The tool sends user data off this server. */
    sendsUserData: z.boolean().optional(),
  })
  .strict();
export type ToolRule = z.infer<typeof ToolRuleSchema>;

export interface ResolvedToolSettings extends ToolTraits {
  readonly hitl: boolean;
}

/** Merges the rules that match a tool, later rules overriding earlier ones field by field. */
export function resolveToolSettings(rules: readonly ToolRule[], server: string, names: readonly string[]): ResolvedToolSettings {
  let hitl: boolean | undefined;
  let sideEffect: ToolTraits['sideEffect'];
  let sendsUserData: boolean | undefined;
  for (const rule of rules) {
    if (rule.server !== undefined && rule.server !== server) continue;
    if (!names.some((name) => globMatch(rule.match, name))) continue;
    hitl = rule.hitl ?? hitl;
    sideEffect = rule.sideEffect ?? sideEffect;
    sendsUserData = rule.sendsUserData ?? sendsUserData;
  }
  return { hitl: hitl ?? false, sideEffect, sendsUserData };
}
