/** The codes this plugin puts in `_meta["dev.sluice/error"]`. */
export const ConcurrencyErrorCode = Object.freeze({
  /** Every slot of the tool is taken and its queue is full: the call was shed. */
  SERVER_BUSY: 'SERVER_BUSY',
  /** The tool's (or the caller's) calls for this window are used up: the call was refused. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** A tool's `policy` settings for this plugin are malformed: its registration fails. */
  INVALID_POLICY: 'INVALID_POLICY',
} as const);

export type ConcurrencyErrorCode = (typeof ConcurrencyErrorCode)[keyof typeof ConcurrencyErrorCode];
