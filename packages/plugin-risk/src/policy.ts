import { z } from 'zod';
import { ToolNameSchema, ToolSelectorSchema, selectTools } from '@sluice/core';
import type { ToolMatcher } from '@sluice/core';
import { ApprovalChannelSchema } from './approval/options.js';
import type { ApprovalChannelSetting } from './approval/options.js';
import { SideEffectSchema } from './scoring/tool-risk.js';
import type { ToolTraits } from './scoring/tool-risk.js';

/** Per-tool settings for local tools, on `server.tool({ policy: { risk: {...} } })`. */
export interface RiskToolPolicy {
  /**
   * A person approves each call (`true`), or never is asked (`false`, even
   * when `approval.defaultFromLevel` would ask). Absent: the approval options
   * decide.
   */
  readonly hitl?: boolean;
  /** Who answers its approval; absent: `approval.channel`. */
  readonly approvalChannel?: ApprovalChannelSetting;
}

declare module '@sluice/core' {
  interface ToolPolicy {
    risk?: RiskToolPolicy;
  }
}

const GLOB = /[*?]/;

/** Settings for imported tools, by tool-name glob (matched against the exposed and the upstream name). */
export const ToolRuleSchema = z
  .object({
    /** A tool selector (core's syntax, matched case-insensitively) on the exposed or the upstream name. */
    match: ToolSelectorSchema.describe(
      'A tool selector (`glob`, `!glob`, `upstream/glob`), matched case-insensitively against the exposed or the upstream name. Later rules override earlier ones field by field.',
    ),
    /** Only tools of this upstream (its configured name). */
    server: z.string().min(1).optional().describe('Only tools of this upstream (its configured name).'),
    /** A person approves each call (`true`), or never is asked (`false`). */
    hitl: z
      .boolean()
      .optional()
      .describe(
        '`true`: a person approves each call; `false`: nobody is ever asked, whatever `approval.defaultFromLevel` says.',
      ),
    /** Who answers the tool's approval. */
    approvalChannel: ApprovalChannelSchema.optional().describe(
      'Who answers the approval of these tools: `client`, `operator` (never the client) or `client-then-operator`. Absent: `approval.channel`.',
    ),
    /** What the tool does remotely, beyond its annotations. */
    sideEffect: SideEffectSchema.optional().describe(
      'What the tool does remotely, beyond its annotations: `remote-write` adds 1 to its score, `remote-admin` 2.',
    ),
    /** The tool sends user data off this server. */
    sendsUserData: z.boolean().optional().describe('The tool sends user data off this server: adds 1 to its score.'),
    /** The name clients see instead (the upstream is still called by its own name). Needs a `match` without `*` or `?`. */
    alias: ToolNameSchema.optional().describe(
      'The name clients see instead (the upstream is still called by its own name). Needs a `match` without `*` or `?`.',
    ),
    /** The description clients see instead of the upstream's. The input schema is never changed. */
    description: z
      .string()
      .min(1)
      .max(10_000)
      .optional()
      .describe(
        "The description clients see instead of the upstream's (at most 10,000 characters). The input schema is never changed.",
      ),
  })
  .strict()
  .superRefine((rule, ctx) => {
    if (rule.alias !== undefined && GLOB.test(rule.match)) {
      ctx.addIssue({
        code: 'custom',
        path: ['alias'],
        message: 'an alias names one tool: give a match without "*" or "?"',
      });
    }
  });
export type ToolRule = z.infer<typeof ToolRuleSchema>;

export interface ResolvedToolSettings extends ToolTraits {
  /** Undefined when no rule says. */
  readonly hitl: boolean | undefined;
  readonly approvalChannel: ApprovalChannelSetting | undefined;
  readonly alias: string | undefined;
  readonly description: string | undefined;
}

/** Merges the rules that match a tool, later rules overriding earlier ones field by field. */
export function resolveToolSettings(
  rules: readonly ToolRule[],
  server: string,
  names: readonly string[],
): ResolvedToolSettings {
  let hitl: boolean | undefined;
  let approvalChannel: ApprovalChannelSetting | undefined;
  let sideEffect: ToolTraits['sideEffect'];
  let sendsUserData: boolean | undefined;
  let alias: string | undefined;
  let description: string | undefined;
  for (const rule of rules) {
    if (rule.server !== undefined && rule.server !== server) continue;
    const matches = matcherOf(rule);
    const original = names[1] ?? names[0] ?? '';
    const source = { kind: 'upstream', upstream: server, originalName: original };
    if (!names.some((name) => matches({ name, source }))) continue;
    hitl = rule.hitl ?? hitl;
    approvalChannel = rule.approvalChannel ?? approvalChannel;
    sideEffect = rule.sideEffect ?? sideEffect;
    sendsUserData = rule.sendsUserData ?? sendsUserData;
    alias = rule.alias ?? alias;
    description = rule.description ?? description;
  }
  return { hitl, approvalChannel, sideEffect, sendsUserData, alias, description };
}

const matchers = new WeakMap<ToolRule, ToolMatcher>();

function matcherOf(rule: ToolRule): ToolMatcher {
  let matcher = matchers.get(rule);
  if (matcher === undefined) matchers.set(rule, (matcher = selectTools([rule.match], { ignoreCase: true })));
  return matcher;
}
