import { refusal } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import { ConcurrencyErrorCode } from './errors.js';

export interface BusyInit {
  readonly tool: string;
  /** How the message names what is full; default `Tool "<tool>"`. */
  readonly subject?: string | undefined;
  readonly active: number;
  readonly queued: number;
  readonly retryAfterMs: number;
}

/**
 * The answer to a shed call: a tool error the model can read, which says
 * how full the tool is and asks it to send fewer calls at once.
 */
export function busy({ tool, subject, active, queued, retryAfterMs }: BusyInit): CallToolResult {
  return refusal({
    code: ConcurrencyErrorCode.SERVER_BUSY,
    message: `${subject ?? `Tool "${tool}"`} is full (${active} running, ${queued} waiting). Try again after a short pause.`,
    suggestion:
      'Make fewer simultaneous calls to this tool: wait for earlier calls to return, then send the rest one at a time or in small batches.',
    retryAfterMs,
    details: { active, queued },
  });
}
