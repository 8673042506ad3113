/** The codes code mode answers with, and the codes a script's `ToolError` may carry besides the guards' own. */
export const CodeModeErrorCode = Object.freeze({
  /** The script threw, or did not compile. */
  SCRIPT_ERROR: 'SCRIPT_ERROR',
  /** The script ran past its wall time. */
  SCRIPT_TIMEOUT: 'SCRIPT_TIMEOUT',
  /** The script awaited something that can never settle (no call of it running): stopped at once, not at its wall time. */
  SCRIPT_STALLED: 'SCRIPT_STALLED',
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
  /** The script paused at a call that needs an answer from the client (the audit log's outcome; the client gets the question). */
  SCRIPT_PAUSED: 'SCRIPT_PAUSED',
  /** A paused script's state or journal was altered, belongs to another caller, or to another source. */
  JOURNAL_INVALID: 'JOURNAL_INVALID',
  /** A paused script's journal lapsed before the script resumed. */
  JOURNAL_EXPIRED: 'JOURNAL_EXPIRED',
  /** A paused script's journal was already resumed once. */
  JOURNAL_USED: 'JOURNAL_USED',
  /** The resumed script made other calls (tool or arguments) than its journal recorded. */
  JOURNAL_MISMATCH: 'JOURNAL_MISMATCH',
  /** A script cannot pause: what its completed calls returned is more than a journal may keep. */
  JOURNAL_TOO_LARGE: 'JOURNAL_TOO_LARGE',
  /**
   * A script cannot pause: its caller already holds as many paused scripts, or bytes of journals, as one caller may,
   * or the server does (`journal.maxPausedPerCaller`, `maxBytesPerCaller`, `maxPausedScripts`, `maxTotalBytes`).
   */
  JOURNALS_FULL: 'JOURNALS_FULL',
  /** `read_tool_file` or `get_tool_docs` named something that does not exist for this request. */
  NOT_FOUND: 'NOT_FOUND',
} as const);

export type CodeModeErrorCode = (typeof CodeModeErrorCode)[keyof typeof CodeModeErrorCode];
