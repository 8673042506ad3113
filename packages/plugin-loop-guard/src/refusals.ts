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

/** What the stack's entries stand for: a tool call's, or a resource read's, prompt get's, completion's or subscription's. */
export type Entries = 'tool' | 'request';

export function loopDetected(name: string, cycle: readonly string[], side: Side, of: Entries = 'tool'): CallToolResult {
  const path = formatPath(cycle);
  return refusal({
    code: LoopGuardErrorCode.LOOP_DETECTED,
    message:
      of === 'tool'
        ? `Loop detected: "${name}" is already in the call stack; calling it again would repeat the cycle ${path}`
        : `Loop detected: "${name}" is already in the call stack; relaying it again would repeat the cycle ${path}`,
    suggestion:
      of === 'tool'
        ? `Do not call "${name}" from inside its own call chain: answer with the results you already have.`
        : 'The services on the path route this request to each other: ask for an item one of them serves itself.',
    details: { entry: name, cycle, side },
  });
}

export function callStackTooDeep(depth: number, maxDepth: number, of: Entries = 'tool'): CallToolResult {
  return refusal({
    code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP,
    message:
      of === 'tool'
        ? `Call chain too deep: ${depth} tool calls are already in progress, and the limit is ${maxDepth}`
        : `Call chain too deep: ${depth} requests are already in progress, and the limit is ${maxDepth}`,
    suggestion:
      of === 'tool'
        ? 'Finish with the results you already have instead of calling further tools.'
        : 'Finish with the results you already have: this request has been relayed from service to service too often.',
    details: { depth, maxDepth },
  });
}
