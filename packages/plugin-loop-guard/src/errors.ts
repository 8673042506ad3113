/** Every code the loop guard raises. Malformed stacks are core's `INVALID_PARAMS` (JSON-RPC -32602). */
export const LoopGuardErrorCode = Object.freeze({
  /** The tool is already in the call stack: calling it again would close a cycle. */
  LOOP_DETECTED: 'LOOP_DETECTED',
  /** The call stack already holds `maxDepth` tools, even if none repeats. */
  CALL_STACK_TOO_DEEP: 'CALL_STACK_TOO_DEEP',
  /** `withCallStack()` was given a name that cannot be a stack entry. */
  INVALID_STACK_ENTRY: 'INVALID_STACK_ENTRY',
} as const);

export type LoopGuardErrorCode = (typeof LoopGuardErrorCode)[keyof typeof LoopGuardErrorCode];
