// Tools the tests build chains from: each hop calls the next name on its path, in-process.
import { z } from 'zod';
import { MetaKey } from '@sluice/core';
import type { CallContext, CallToolResult, ToolDefinition } from '@sluice/core';
import { textOf } from '@sluice/testing';

const HopInput = z.object({ path: z.array(z.string()).default([]) });

/** What the last hop saw: the `_meta` it would forward upstream. */
export interface Forwarded {
  readonly stack: unknown;
  readonly plain: unknown;
  readonly origin: unknown;
}

function forwarded(ctx: CallContext): CallToolResult {
  const out = ctx.outgoingMeta;
  const seen: Forwarded = { stack: out[MetaKey.CALL_STACK], plain: out.callStack, origin: out[MetaKey.ORIGIN] };
  return { content: [{ type: 'text', text: JSON.stringify(seen) }] };
}

/** A tool that calls `path[0]` with the rest of the path, or reports what it would forward when the path is done. */
export function hop(name: string): ToolDefinition<typeof HopInput> {
  return {
    name,
    inputSchema: HopInput,
    handler: async ({ path }, ctx) => {
      const [next, ...rest] = path;
      return next === undefined ? forwarded(ctx) : ctx.call(next, { path: rest });
    },
  };
}

export function readForwarded(result: CallToolResult): Forwarded {
  return JSON.parse(textOf(result)) as Forwarded;
}
