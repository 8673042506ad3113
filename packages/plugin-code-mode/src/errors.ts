/** The codes code mode answers with, and the codes a script's `ToolError` may carry besides the guards' own. */
export const CodeModeErrorCode = Object.freeze({
  /** The script threw, or did not compile. */
  SCRIPT_ERROR: 'SCRIPT_ERROR',
  /** The script ran past its wall time. */
  SCRIPT_TIMEOUT: 'SCRIPT_TIMEOUT',
  /** The script's own code ran past its CPU time. */
  CPU_LIMIT: 'CPU_LIMIT',
  /** The script ran out of its heap or stack. */
  MEMORY_LIMIT: 'MEMORY_LIMIT',
  /** The script made more tool calls than it may. */
  TOOL_CALL_LIMIT: 'TOOL_CALL_LIMIT',
  /** The script's result or console output is larger than it may be. */
  OUTPUT_TOO_LARGE: 'OUTPUT_TOO_LARGE',
  /** The script's source is larger than it may be. */
  SCRIPT_TOO_LARGE: 'SCRIPT_TOO_LARGE',
  /** As many scripts as may run at once are running. */
  SCRIPTS_BUSY: 'SCRIPTS_BUSY',
  /** A script called a tool that is not in its bindings (hidden from this request, or unknown). */
  TOOL_NOT_AVAILABLE: 'TOOL_NOT_AVAILABLE',
  /** A script passed a tool arguments that are not a JSON object. */
  INVALID_ARGUMENTS: 'INVALID_ARGUMENTS',
  /** The caller cancelled the script. */
  CANCELLED: 'CANCELLED',
  /** `read_tool_file` or `get_tool_docs` named something that does not exist for this request. */
  NOT_FOUND: 'NOT_FOUND',
} as const);

export type CodeModeErrorCode = (typeof CodeModeErrorCode)[keyof typeof CodeModeErrorCode];
