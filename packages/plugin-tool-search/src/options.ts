import { PluginModeSchema, ToolNameSchema, ToolSelectorListSchema } from '@sluice/core';
import { z } from 'zod';

/** The names under which the search tools are exposed. */
export const SearchToolNames = z.strictObject({
  /** Ranked matches for a query. */
  search: ToolNameSchema.default('search_tools').describe('Ranked matches for a query.'),
  /** Full definitions of named tools. */
  describe: ToolNameSchema.default('describe_tools').describe('Full definitions of named tools.'),
});

/** How much of each tool enters the index: the bounds on memory and on what one definition can weigh. */
export const IndexLimits = z.strictObject({
  /** Characters of a description (and of all parameter text together) that are indexed; the rest is ignored. */
  maxFieldChars: z
    .number()
    .int()
    .min(64)
    .max(65_536)
    .default(2_048)
    .describe(
      'Characters of a description (and of all parameter text together) that are indexed; the rest is ignored.',
    ),
  /**
   * Occurrences of one word in one field that count; more add nothing, so a
   * description that repeats a word cannot outweigh one that says it once.
   */
  maxTermRepeats: z
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(1)
    .describe(
      'Occurrences of one word in one field that count; more add nothing, so a description that repeats a word cannot outweigh one that says it once.',
    ),
  /** Parameters per tool whose names and descriptions are indexed. */
  maxParams: z
    .number()
    .int()
    .min(0)
    .max(1_000)
    .default(64)
    .describe('Parameters per tool whose names and descriptions are indexed.'),
});

export const ToolSearchOptions = z.strictObject({
  /** `enforce`: `tools/list` shows the search tools and the always-visible ones; `audit`: it shows everything and logs what it would hide. */
  mode: PluginModeSchema.default('enforce'),
  /** Tools `tools/list` keeps showing, as tool selectors (`!` carves out). */
  alwaysVisible: ToolSelectorListSchema.default([]).describe(
    'Tools `tools/list` keeps showing, as tool selectors (`!` carves out).',
  ),
  /** The names of the search tools. */
  tools: SearchToolNames.default({ search: 'search_tools', describe: 'describe_tools' }).describe(
    'The names of the search tools.',
  ),
  /** Matches `search_tools` returns when the caller gives no `limit`. */
  defaultLimit: z
    .number()
    .int()
    .min(1)
    .max(100)
    .default(8)
    .describe('Matches `search_tools` returns when the caller gives no `limit`.'),
  /** The most matches one search returns, whatever `limit` asks. */
  maxLimit: z
    .number()
    .int()
    .min(1)
    .max(100)
    .default(25)
    .describe('The most matches one search returns, whatever `limit` asks.'),
  /** Names one `describe_tools` call may ask for. */
  maxDescribe: z.number().int().min(1).max(100).default(20).describe('Names one `describe_tools` call may ask for.'),
  /** How much of each tool enters the index. */
  index: IndexLimits.default({ maxFieldChars: 2_048, maxTermRepeats: 1, maxParams: 64 }).describe(
    'How much of each tool enters the index.',
  ),
});
export type ToolSearchOptions = z.input<typeof ToolSearchOptions>;
export type ParsedToolSearchOptions = z.output<typeof ToolSearchOptions>;
