/** Every code a chain stop carries in `_meta["dev.sluice/error"].code`. */
export const ChainingErrorCode = Object.freeze({
  /** The chain already made `maxDepth` chained calls. */
  TOO_DEEP: 'CHAIN_TOO_DEEP',
  /** The next tool, with the same arguments, already ran in this chain. */
  CIRCULAR: 'CHAIN_CIRCULAR',
  /** The next tool is not exposed by this server. */
  UNKNOWN_TOOL: 'CHAIN_UNKNOWN_TOOL',
  /** The next tool's arguments do not match its input schema. */
  INVALID_ARGUMENTS: 'CHAIN_INVALID_ARGUMENTS',
  /** The next-tool directive is malformed (not `{ tool, arguments }`, or unserializable arguments). */
  INVALID_DIRECTIVE: 'CHAIN_INVALID_DIRECTIVE',
  /** The next tool may not be called by a chain (see the `targets` option). */
  TARGET_DENIED: 'CHAIN_TARGET_DENIED',
  /** Another guard refused the chained call (busy, loop, risk, approval...). */
  STEP_REFUSED: 'CHAIN_STEP_REFUSED',
} as const);

export type ChainingErrorCode = (typeof ChainingErrorCode)[keyof typeof ChainingErrorCode];
