import { refusal } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import type { CallStack } from './call-stack.js';
import { LoopGuardErrorCode } from './errors.js';

/** Longer cycles are shortened in the message (not in `details`), so an error stays readable. */
const SHOWN_ENTRIES = 8;

/** Where the repeat was seen: on arrival at this service, or before a proxied call left it. */
export type Side = 'provider' | 'consumer';

/** The cycle `name` would close: from its first appearance in `stack`, back to itself. */
export function cycleOf(stack: CallStack, at: number, name: string): string[] {
  const cycle = stack.slice(at);
  cycle.push(name);
  return cycle;
}

export function formatPath(path: readonly string[]): string {
  if (path.length <= SHOWN_ENTRIES) return path.join(' -> ');
  const head = path.slice(0, SHOWN_ENTRIES / 2);
  const tail = path.slice(path.length - SHOWN_ENTRIES / 2);
  return `${head.join(' -> ')} -> ... (${path.length - SHOWN_ENTRIES} more) -> ${tail.join(' -> ')}`;
}

export function loopDetected(name: string, cycle: readonly string[], side: Side): CallToolResult {
  return refusal({
    code: LoopGuardErrorCode.LOOP_DETECTED,
    message: `Loop detected: "${name}" is already in the call stack; calling it again would repeat the cycle ${formatPath(cycle)}`,
    suggestion: `Do not call "${name}" from inside its own call chain: answer with the results you already have.`,
    details: { entry: name, cycle, side },
  });
}

export function callStackTooDeep(depth: number, maxDepth: number): CallToolResult {
  return refusal({
    code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP,
    message: `Call chain too deep: ${depth} tool calls are already in progress, and the limit is ${maxDepth}`,
    suggestion: 'Finish with the results you already have instead of calling further tools.',
    details: { depth, maxDepth },
  });
}
