// The public API of @sluice/plugin-tool-search, listed by name.

export { CATALOG_LIST, PLUGIN_NAME, toolSearch } from './plugin.js';
export type { CallerView } from './plugin.js';
export { ToolSearchEvent } from './events.js';
export { ToolSearchErrorCode } from './errors.js';
export { IndexLimits, SearchToolNames, ToolSearchOptions } from './options.js';
export { MAX_QUERY_CHARS } from './search-tools.js';
export type { ToolMatch } from './search-tools.js';
export { ToolIndex, repetitionWeight, riskLevelOf, summaryOf } from './tool-index.js';
export type { SearchHit } from './tool-index.js';
export { cappedWordsOf, stem, wordsOf } from './terms.js';
export { VERSION } from './version.js';
