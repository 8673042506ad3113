/** The events tool search logs (`event` field). */
export const ToolSearchEvent = Object.freeze({
  /** One per search: the query (cut to 200 characters), the matches returned. */
  SEARCH: 'tool_search.search',
  /** In audit mode: how many tools a `tools/list` would have hidden. */
  WOULD_HIDE: 'tool_search.would_hide',
} as const);
