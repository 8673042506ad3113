import { PluginModeSchema } from '@sluice/core';
import { z } from 'zod';
import { ApprovalOptions } from './approval/options.js';
import { CatalogEntrySchema } from './scoring/catalog.js';
import { SEVERITIES } from './scan/patterns.js';
import type { JudgeFunction } from './scan/judge.js';
import { JudgeEndpoint } from './scan/judge.js';
import { RISK_LEVELS } from './scoring/levels.js';
import { DEFAULT_MAX_VANISHED } from './ledger/ledger.js';
import { ToolRuleSchema } from './policy.js';
import { ServerConfigSchema } from './scoring/server-risk.js';

const JudgeFunctionSchema = z.custom<JudgeFunction>((value) => typeof value === 'function', {
  message: 'expected a function (input, signal) => verdict, or { url }',
});

/** The bounds of the outside judge, whichever its form. */
const judgeBounds = {
  timeoutMs: z
    .number()
    .int()
    .positive()
    .max(60_000)
    .default(2_000)
    .describe('How long the judge may take per definition; past it the definition has no verdict (logged).'),
  cacheSize: z
    .number()
    .int()
    .positive()
    .max(100_000)
    .default(1_000)
    .describe("How many verdicts are kept, keyed by the definition's fingerprint."),
};

/** `scan` in a config file: the judge is an HTTP endpoint. */
export const RiskScanSettings = z
  .object({
    judge: JudgeEndpoint.optional().describe(
      'An outside judge (a classifier or guardrail service) asked about each imported definition; a poisoned verdict is a `JUDGE_VERDICT` hit.',
    ),
    ...judgeBounds,
  })
  .strict()
  .prefault({});

/** `scan` in code: the judge may also be a function. */
const RiskScanOptions = z
  .object({
    judge: z
      .union([JudgeEndpoint, JudgeFunctionSchema])
      .optional()
      .describe(
        'An outside judge asked about each imported definition: a function, or an HTTP endpoint; a poisoned verdict is a `JUDGE_VERDICT` hit.',
      ),
    ...judgeBounds,
  })
  .strict()
  .prefault({});

const riskFields = z.object({
  mode: PluginModeSchema.default('enforce'),
  /** What a poisoning hit does: `warn` logs and publishes it, `block` keeps the tool out. */
  policy: z
    .enum(['warn', 'block'])
    .default('warn')
    .describe(
      'What a poisoning hit does: `warn` logs and publishes it; `block` keeps the tool out (`POISONING_BLOCKED`) when its hits reach `blockAt`.',
    ),
  /** Under `block`, the severity that blocks; hits below it add up (two mediums make a high), and `low` never blocks alone. */
  blockAt: z
    .enum(SEVERITIES)
    .default('high')
    .describe(
      'Under `block`: a hit at or above this severity blocks; lower hits add up (low 1, medium 2, high 4: two mediums make a high), and `low` hits never block on their own.',
    ),
  /** Which references to another exposed tool the scan reports: `concealed` (high), `directed` (default: also medium for an order sending the model to a tool that acts), `seed` (every imperative within 80 characters, medium). */
  crossServerReferences: z
    .enum(['concealed', 'directed', 'seed'])
    .default('directed')
    .describe(
      'Which references to another exposed tool the scan reports: `concealed` (high) only; `directed` also an order sending the model to a tool that acts (medium); `seed` also every imperative within 80 characters (medium).',
    ),
  /** Scan the text of every tool result too: `warn` annotates the result, `block` refuses it. */
  scanResults: z
    .boolean()
    .default(false)
    .describe(
      'Scan the text of every tool result too: annotated under `warn`, refused with `RESULT_POISONING_BLOCKED` under `block`.',
    ),
  /** Tools whose composed level is above this are not exposed. */
  maxRisk: z
    .enum(RISK_LEVELS)
    .default('L5')
    .describe('Tools whose composed level is above this are not exposed (`ABOVE_MAX_RISK`).'),
  /** What the operator knows about each upstream, by its configured name. */
  servers: z
    .record(z.string().min(1), ServerConfigSchema)
    .default({})
    .describe(
      'What the operator knows about each upstream, by its configured name; fields left out are derived from the import where it can be.',
    ),
  /** Known servers and how far they are trusted. */
  catalog: z
    .array(CatalogEntrySchema)
    .default([])
    .describe('Known servers, how far each is trusted, and the hosts or commands that identify it.'),
  /** Per-tool settings for imported tools, by name glob. */
  tools: z
    .array(ToolRuleSchema)
    .default([])
    .describe('Per-tool settings for imported tools, by tool selector; later rules override earlier ones.'),
  /** The composition shadowing rules, each on by default. */
  rules: z
    .object({
      aliasCollision: z
        .boolean()
        .default(true)
        .describe(
          'R1: keep out a tool whose exposed name is already exposed by another source, or differs from one only in case or in `-`, `_`, `.`.',
        ),
      crossServerReference: z
        .boolean()
        .default(true)
        .describe(
          "R2: keep out a tool whose description orders the model to another upstream's tool with concealment or exfiltration wording.",
        ),
      selfScope: z
        .boolean()
        .default(true)
        .describe('R3: keep out a tool whose description names another configured upstream as its scope.'),
    })
    .strict()
    .prefault({})
    .describe('The composition shadowing rules, each on by default; a violation keeps the tool out.'),
  /** Where the fingerprint ledger persists. */
  ledger: z
    .object({
      /** `auto`: the server's store when it is shared (not `memory`), else the file. */
      persist: z
        .enum(['auto', 'file', 'store', 'memory'])
        .default('auto')
        .describe(
          "Where approvals live: `file`; the server's `store`; `memory` (forgotten on restart); `auto`: the store when it is shared (not `memory`), else the file.",
        ),
      /** The JSON file for `file` (and `auto` without a shared store). */
      path: z
        .string()
        .min(1)
        .default('.sluice/risk-ledger.json')
        .describe('The JSON file of `file` (and of `auto` without a shared store), relative to the working directory.'),
      /** With a shared store: how stale a replica's view of holds and approvals made elsewhere may be, in ms. 0 reads on every call. */
      syncMs: z
        .number()
        .int()
        .nonnegative()
        .max(3_600_000)
        .default(1_000)
        .describe(
          "With a shared store: how stale a replica's view of holds and approvals made on other replicas may be, in ms; 0 reads the store on every call of an imported tool.",
        ),
      /** Tools an upstream stopped listing kept per upstream; past it, those gone longest are forgotten, undecided ones first. */
      maxVanished: z
        .number()
        .int()
        .nonnegative()
        .max(100_000)
        .default(DEFAULT_MAX_VANISHED)
        .describe(
          'Tools an upstream stopped listing that the ledger keeps, per upstream (and per upstream for its prompts), so that one that returns redefined is held; past it, those gone longest are forgotten, active ones no operator decided on first and held or revoked ones last, and a forgotten tool that returns is new.',
        ),
    })
    .strict()
    .prefault({})
    .describe(
      'The fingerprint ledger: where approved tool definitions persist, so a changed definition is held for review.',
    ),
  /** Each upstream's share of the lines the plugin logs about what it lists. */
  logs: z
    .object({
      perUpstream: z
        .object({
          maxLines: z
            .number()
            .int()
            .min(1)
            .max(1_000_000)
            .default(100)
            .describe(
              'Lines about one upstream (risk levels, scan hits, mismatches, holds, removals) written per window; the rest are left out, and one UpstreamLinesSuppressed line says how many.',
            ),
          windowMs: z
            .number()
            .int()
            .min(1_000)
            .max(86_400_000)
            .default(60_000)
            .describe('The window of perUpstream.maxLines, in ms.'),
        })
        .strict()
        .prefault({})
        .describe(
          "Each upstream's share of the plugin's lines, so that an upstream redefining or renaming its tools on a timer cannot fill the log.",
        ),
    })
    .strict()
    .prefault({})
    .describe('What the plugin logs about what upstreams list.'),
  /** Human approval at run time. */
  approval: ApprovalOptions.prefault({}).describe(
    'Human approval at run time: which tools ask a person before each call, for how long, and how the state is sealed.',
  ),
  /** The `tool.start` / `tool.done` / `tool.crash` events around each call. */
  calls: z
    .object({
      /** Which calls get the events: imported tools' (the wrapped ones), every tool's, or none. */
      events: z
        .enum(['upstream', 'all', 'off'])
        .default('upstream')
        .describe(
          "Which calls log `tool.start` / `tool.done` / `tool.crash`: imported tools' (the wrapped ones), every tool's, or none.",
        ),
      /** The pino level of `tool.start` and `tool.done` (`tool.crash` is `warn`). */
      level: z
        .enum(['trace', 'debug', 'info'])
        .default('info')
        .describe('The pino level of `tool.start` and `tool.done`; `tool.crash` is always `warn`.'),
    })
    .strict()
    .prefault({})
    .describe('The `tool.start` / `tool.done` / `tool.crash` log events around each call.'),
  /**
   * Values masked out of every error result of an imported tool and every
   * line the plugin logs: upstream header values, tokens, environment
   * values. Shorter than 4 characters are ignored.
   */
  secrets: z
    .array(z.string())
    .max(1_000)
    .default([])
    .describe(
      "Values masked as `[redacted]` out of every error result of an imported tool and every line the plugin logs: upstream header values, tokens, environment values. Values shorter than 4 characters are ignored; a value's space-separated parts of 8 or more characters are masked too.",
    ),
});

function checkCatalog(options: z.output<typeof riskFields>, ctx: z.RefinementCtx): void {
  const ids = new Set<string>();
  options.catalog.forEach((entry, index) => {
    if (ids.has(entry.id))
      ctx.addIssue({ code: 'custom', path: ['catalog', index, 'id'], message: `duplicate catalog id "${entry.id}"` });
    ids.add(entry.id);
  });
  for (const [name, server] of Object.entries(options.servers)) {
    if (server.catalog !== undefined && !ids.has(server.catalog)) {
      ctx.addIssue({
        code: 'custom',
        path: ['servers', name, 'catalog'],
        message: `no catalog entry has id "${server.catalog}"`,
      });
    }
  }
}

/** The options of `risk()`. */
export const RiskOptions = riskFields
  .extend({ scan: RiskScanOptions.describe('The outside judge of the poisoning scan.') })
  .strict()
  .superRefine(checkCatalog);

/** The options of `risk()` as a config file holds them: the same, with the judge an HTTP endpoint only. */
export const RiskSettings = riskFields
  .extend({ scan: RiskScanSettings.describe('The outside judge of the poisoning scan.') })
  .strict()
  .superRefine(checkCatalog);

export type RiskOptions = z.input<typeof RiskOptions>;
export type RiskConfig = z.output<typeof RiskOptions>;
