import { PluginModeSchema } from '@sluice/core';
import { z } from 'zod';
import { ApprovalOptions } from './approval/options.js';
import { CatalogEntrySchema } from './scoring/catalog.js';
import { SEVERITIES } from './scan/patterns.js';
import { RISK_LEVELS } from './scoring/levels.js';
import { ToolRuleSchema } from './policy.js';
import { ServerConfigSchema } from './scoring/server-risk.js';

/** The options of `risk()`. */
export const RiskOptions = z
  .object({
    mode: PluginModeSchema.default('enforce'),
    /** What a poisoning hit does: `warn` logs and publishes it, `block` keeps the tool out. */
    policy: z.enum(['warn', 'block']).default('warn'),
    /** Under `block`, the severity that blocks; hits below it add up (two mediums make a high), and `low` never blocks alone. */
    blockAt: z.enum(SEVERITIES).default('high'),
    /** Which references to another exposed tool the scan reports: `concealed` (high), `directed` (default: also medium for an order sending the model to a tool that acts), `seed` (every imperative within 80 characters, medium). */
    crossServerReferences: z.enum(['concealed', 'directed', 'seed']).default('directed'),
    /** Scan the text of imported tools' results too: `warn` annotates the result, `block` refuses it. */
    scanResults: z.boolean().default(false),
    /** Tools whose composed level is above this are not exposed. */
    maxRisk: z.enum(RISK_LEVELS).default('L5'),
    /** What the operator knows about each upstream, by its configured name. */
    servers: z.record(z.string().min(1), ServerConfigSchema).default({}),
    /** Known servers and how far they are trusted. */
    catalog: z.array(CatalogEntrySchema).default([]),
    /** Per-tool settings for imported tools, by name glob. */
    tools: z.array(ToolRuleSchema).default([]),
    /** The composition shadowing rules, each on by default. */
    rules: z
      .object({
        aliasCollision: z.boolean().default(true),
        crossServerReference: z.boolean().default(true),
        selfScope: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    /** Where the fingerprint ledger persists. */
    ledger: z
      .object({
        /** `auto`: the server's store when it is shared (not `memory`), else the file. */
        persist: z.enum(['auto', 'file', 'store', 'memory']).default('auto'),
        /** The JSON file for `file` (and `auto` without a shared store). */
        path: z.string().min(1).default('.sluice/risk-ledger.json'),
        /** With a shared store: how stale a replica's view of holds and approvals made elsewhere may be, in ms. 0 reads on every call. */
        syncMs: z.number().int().nonnegative().max(3_600_000).default(1_000),
      })
      .strict()
      .prefault({}),
    /** Human approval at run time. */
    approval: ApprovalOptions.prefault({}),
    /** The `tool.start` / `tool.done` / `tool.crash` events around each call. */
    calls: z
      .object({
        /** Which calls get the events: imported tools' (the wrapped ones), every tool's, or none. */
        events: z.enum(['upstream', 'all', 'off']).default('upstream'),
        /** The pino level of `tool.start` and `tool.done` (`tool.crash` is `warn`). */
        level: z.enum(['trace', 'debug', 'info']).default('info'),
      })
      .strict()
      .prefault({}),
    /**
     * Values masked out of every error result of an imported tool and every
     * line the plugin logs: upstream header values, tokens, environment
     * values. Shorter than 4 characters are ignored.
     */
    secrets: z.array(z.string()).max(1_000).default([]),
  })
  .strict()
  .superRefine((options, ctx) => {
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
  });

export type RiskOptions = z.input<typeof RiskOptions>;
export type RiskConfig = z.output<typeof RiskOptions>;
