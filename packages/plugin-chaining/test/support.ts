// Test fixtures: tools that emit next-tool directives, and a stand-in for a load-shedding guard.
import { z } from 'zod';
import { definePlugin, refusal } from '@sluice/core';
import type { CallToolResult, Plugin, ToolDefinition } from '@sluice/core';
import { withNext } from '@sluice/plugin-chaining';

/**
 * A guard that sheds calls to the named tools in preCall with SERVER_BUSY,
 * as a concurrency guard does when its queue is full. Records what it saw.
 */
export function busyGuard(
  busy: readonly string[],
): Plugin & { readonly seen: { tool: string; stack: readonly string[] }[] } {
  const seen: { tool: string; stack: readonly string[] }[] = [];
  return definePlugin({
    seen,
    name: 'test-busy',
    version: '0.0.0',
    apply({ hooks }) {
      hooks.preCall.tap('test-busy', (ctx) => {
        seen.push({ tool: ctx.tool.name, stack: ctx.stack });
        if (!busy.includes(ctx.tool.name)) return undefined;
        return refusal({
          code: 'SERVER_BUSY',
          message: `${ctx.tool.name} is at capacity`,
          suggestion: 'Retry shortly.',
          retryAfterMs: 500,
        });
      });
    },
  });
}

export const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** Counts handler runs per tool. */
export class Runs {
  private readonly counts = new Map<string, number>();
  hit(tool: string): void {
    this.counts.set(tool, (this.counts.get(tool) ?? 0) + 1);
  }
  of(tool: string): number {
    return this.counts.get(tool) ?? 0;
  }
}

/**
 * Tools `step0` ... `stepN`: each `stepK` answers `stepK:n` and names
 * `stepK+1` as the next tool with `{ n: n + 1 }`; the last names none.
 */
export function stepTools(last: number, runs = new Runs()): ToolDefinition<z.ZodObject<{ n: z.ZodNumber }>>[] {
  return Array.from({ length: last + 1 }, (_, k) => ({
    name: `step${k}`,
    inputSchema: z.object({ n: z.number() }),
    handler: ({ n }: { n: number }) => {
      runs.hit(`step${k}`);
      const result = text(`step${k}:${n}`);
      return k < last ? withNext(result, `step${k + 1}`, { n: n + 1 }) : result;
    },
  }));
}
