import { toolError } from '@sluice/core';
import type { CallContext, CallToolResult, SluiceTool, ToolDefinition } from '@sluice/core';
import { ToolSearchErrorCode } from './errors.js';
import type { ParsedToolSearchOptions } from './options.js';
import type { CallerView } from './plugin.js';
import { ToolSearchEvent } from './events.js';
import type { ToolIndex } from './tool-index.js';
import { riskLevelOf, summaryOf } from './tool-index.js';
import { wordsOf } from './terms.js';

/** What the search tools need from the plugin. */
export interface SearchRuntime {
  readonly config: ParsedToolSearchOptions;
  /** The index, up to date with the catalog. */
  index(): ToolIndex;
  /** The tools the caller of `ctx` may call, after every guard's filter. */
  viewOf(ctx: CallContext): CallerView;
  toolOf(name: string): SluiceTool | undefined;
}

/** One match as `search_tools` returns it. */
export interface ToolMatch {
  readonly name: string;
  readonly summary: string;
  /** The upstream server the tool comes from; absent for the server's own tools. */
  readonly upstream?: string;
  /** The risk level the risk plugin published; absent without it. */
  readonly risk?: string;
  readonly score: number;
}

/** The most characters of a query that are read. */
export const MAX_QUERY_CHARS = 512;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

type Args = Record<string, unknown>;

/** Runs one search for the caller of `ctx`: ranked matches among the tools it may call. */
export function search(runtime: SearchRuntime, ctx: CallContext, query: string, limit: number): ToolMatch[] {
  const view = runtime.viewOf(ctx);
  const hits = runtime.index().query(query, limit, (name) => view.tools.has(name));
  return hits.flatMap((hit) => {
    const definition = view.tools.get(hit.name);
    if (definition === undefined) return [];
    const source = runtime.toolOf(hit.name)?.source;
    const risk = riskLevelOf(definition);
    return {
      name: hit.name,
      summary: summaryOf(definition),
      ...(source?.kind === 'upstream' ? { upstream: source.upstream } : {}),
      ...(risk === undefined ? {} : { risk }),
      score: hit.score,
    };
  });
}

/** `search_tools` and `describe_tools`. */
export function searchTools(runtime: SearchRuntime): ToolDefinition[] {
  const { config } = runtime;
  const names = config.tools;
  return [
    {
      name: names.search,
      title: 'Search tools',
      description:
        'Finds the tools that can do a task, best match first: describe the task in a few words ' +
        '(e.g. "create a github issue", "read a file"). Returns each tool’s name, a one-line summary, its server and risk level. ' +
        `Call a tool it finds by its name; call ${names.describe} first for its full input schema.`,
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'What the tool should do' },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: config.maxLimit,
            description: `Most matches to return (default ${config.defaultLimit})`,
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      annotations: READ_ONLY,
      handler: (args, ctx) => {
        const query = String((args as Args).query).slice(0, MAX_QUERY_CHARS);
        if (wordsOf(query).length === 0) {
          return toolError({
            code: ToolSearchErrorCode.EMPTY_QUERY,
            message: 'The query has no word to search for.',
            suggestion: 'Describe the task in a few words, e.g. "list open pull requests".',
          });
        }
        const asked = (args as Args).limit;
        const limit = Math.min(typeof asked === 'number' ? asked : config.defaultLimit, config.maxLimit);
        const tools = search(runtime, ctx, query, limit);
        ctx.logger.info(
          { event: ToolSearchEvent.SEARCH, query: query.slice(0, 200), matches: tools.length },
          'tools searched',
        );
        return { content: [{ type: 'text', text: JSON.stringify({ tools }) }], structuredContent: { tools } };
      },
    },
    {
      name: names.describe,
      title: 'Describe tools',
      description: `Returns the full definitions (input and output schemas, annotations) of tools ${names.search} found, by name.`,
      inputSchema: {
        type: 'object',
        properties: {
          names: {
            type: 'array',
            items: { type: 'string', minLength: 1, maxLength: 128 },
            minItems: 1,
            maxItems: config.maxDescribe,
            description: 'Tool names, as search_tools returned them',
          },
        },
        required: ['names'],
        additionalProperties: false,
      },
      annotations: READ_ONLY,
      handler: (args, ctx) => describe(runtime, ctx, (args as Args).names as string[]),
    },
  ];
}

function describe(runtime: SearchRuntime, ctx: CallContext, names: readonly string[]): CallToolResult {
  const view = runtime.viewOf(ctx);
  const tools = [];
  const unknown: string[] = [];
  for (const name of new Set(names)) {
    const definition = view.tools.get(name);
    // A tool the caller may not call is "unknown" too, so that its existence does not leak.
    if (definition === undefined) unknown.push(name);
    else tools.push(definition);
  }
  const body = unknown.length > 0 ? { tools, unknown } : { tools };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}
