import { Stage, definePlugin, parseOptions, selectTools } from '@sluice/core';
import type { CallContext, CatalogChange, Headers, Plugin, PluginApi, Tool } from '@sluice/core';
import { ToolSearchEvent } from './events.js';
import { searchTools } from './search-tools.js';
import type { ParsedToolSearchOptions } from './options.js';
import { ToolSearchOptions } from './options.js';
import { ToolIndex } from './tool-index.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'tool-search';

/**
 * Marks the headers of a list of what the caller may call (this plugin's
 * own, code mode's bindings) rather than of a `tools/list`: the hiding lets
 * it through whole, every other filter still applies. A symbol never comes
 * off the wire, so no client can set it.
 */
export const CATALOG_LIST = Symbol.for('dev.sluice/catalog-list');

/** The tools a caller may use now, as `tools/list` would show them without this plugin's hiding. */
export interface CallerView {
  readonly tools: ReadonlyMap<string, Tool>;
}

/**
 * Tool search: `tools/list` shows two search tools (and the tools marked
 * always-visible) instead of every tool; `search_tools` ranks the tools the
 * caller may call for a query, `describe_tools` gives their full definitions,
 * and a found tool is called by its name as usual.
 */
export function toolSearch(options: ToolSearchOptions = {}): Plugin {
  const config = parseOptions(PLUGIN_NAME, ToolSearchOptions, options);
  return definePlugin({
    name: PLUGIN_NAME,
    version: VERSION,
    mode: config.mode,
    apply: (api) => applyToolSearch(api, config),
  });
}

function applyToolSearch(api: PluginApi, config: ParsedToolSearchOptions): void {
  const own = new Set([config.tools.search, config.tools.describe]);
  const alwaysVisible = selectTools(config.alwaysVisible);
  const index = new ToolIndex(config.index);
  let seeded = false;

  api.hooks.listTools.tap({ name: PLUGIN_NAME, stage: Stage.LAST }, (tools, ctx) => {
    if ((ctx.headers as Record<symbol, unknown>)[CATALOG_LIST] === true) return tools;
    const visible = (t: Tool): boolean => own.has(t.name) || alwaysVisible(ctx.toolOf(t.name) ?? t.name);
    if (api.mode === 'enforce') return tools.filter(visible);
    ctx.logger.info(
      { event: ToolSearchEvent.WOULD_HIDE, tools: tools.filter((t) => !visible(t)).length },
      'tool search would hide the tools it can find',
    );
    return tools;
  });

  api.tools.subscribe((change: CatalogChange) => {
    if (!seeded) return;
    for (const tool of change.removed) index.remove(tool.name);
    for (const tool of change.added) if (!own.has(tool.name)) index.put(tool);
  });

  /** The index, filled from the catalog on first use and kept in step by catalog changes after that. */
  const searchIndex = (): ToolIndex => {
    if (!seeded) {
      for (const name of api.tools.names()) {
        const tool = api.tools.get(name);
        if (tool && !own.has(name)) index.put(tool);
      }
      seeded = true;
    }
    return index;
  };

  /** Every guard's `listTools` filter, for this caller: what it may call. */
  const viewOf = (ctx: CallContext): CallerView => {
    const headers: Headers = { ...ctx.headers };
    Object.defineProperty(headers, CATALOG_LIST, { value: true });
    const listed = api.tools.list({ headers, authInfo: ctx.authInfo, transport: ctx.transport });
    const tools = new Map<string, Tool>();
    for (const tool of listed) if (!own.has(tool.name)) tools.set(tool.name, tool);
    return { tools };
  };

  for (const tool of searchTools({ config, index: searchIndex, viewOf, toolOf: (n) => api.tools.get(n) }))
    api.tool(tool);
}
