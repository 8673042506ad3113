/** The codes this plugin answers with. */
export const ToolSearchErrorCode = Object.freeze({
  /** The query has no word to search for. */
  EMPTY_QUERY: 'EMPTY_QUERY',
} as const);

export type ToolSearchErrorCode = (typeof ToolSearchErrorCode)[keyof typeof ToolSearchErrorCode];
