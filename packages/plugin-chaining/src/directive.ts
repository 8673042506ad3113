import { z } from 'zod';
import { MetaKey, formatIssues, isToolName } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';

/**
 * Where a result may carry its next-tool directive, in the order they are
 * read: ours, the plain key of the chaining proposal, and the key of
 * OpenAI-style app tools.
 */
export const NEXT_TOOL_KEYS = Object.freeze([MetaKey.NEXT_TOOL, 'nextTool', 'openai/nextTool'] as const);

export type NextToolKey = (typeof NEXT_TOOL_KEYS)[number];

/**
 * Named arguments: a plain object, never an array or a class instance, and
 * never with an own `__proto__` key (JSON can carry one; no honest tool
 * needs it). Checked, not copied: a record schema would copy every key on
 * every hop of every chain.
 */
function isArgumentRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && !Object.hasOwn(value, '__proto__');
}

/** The directive's wire shape. Untrusted when it comes from an upstream: always parsed with this. */
export const NextToolSchema = z.object({
  tool: z.string().refine(isToolName, 'must be a tool name: 1-128 letters, digits, "_", "-" or "."'),
  arguments: z.custom<Record<string, unknown>>(isArgumentRecord, 'must be an object of named arguments').optional(),
});

/** A directive that passed the schema, its arguments defaulted to `{}`. */
export interface NextTool {
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
}

export type DirectiveRead =
  | { readonly kind: 'none' }
  | { readonly kind: 'valid'; readonly key: NextToolKey; readonly next: NextTool }
  | { readonly kind: 'invalid'; readonly key: NextToolKey; readonly message: string };

const NONE: DirectiveRead = Object.freeze({ kind: 'none' });

function metaOf(result: CallToolResult): Record<string, unknown> | undefined {
  const meta: unknown = (result as CallToolResult | undefined)?._meta;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta)
    ? (meta as Record<string, unknown>)
    : undefined;
}

function presentValue(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** Whether a result names a next tool under any of the keys: the per-call fast path. */
export function hasDirective(result: CallToolResult): boolean {
  const meta = metaOf(result);
  if (meta === undefined) return false;
  return (
    presentValue(meta[NEXT_TOOL_KEYS[0]]) ||
    presentValue(meta[NEXT_TOOL_KEYS[1]]) ||
    presentValue(meta[NEXT_TOOL_KEYS[2]])
  );
}

/** Reads the first directive present and checks its shape. Never throws on what a tool returned. */
export function readDirective(result: CallToolResult): DirectiveRead {
  const meta = metaOf(result);
  if (meta === undefined) return NONE;
  for (const key of NEXT_TOOL_KEYS) {
    const raw = meta[key];
    if (!presentValue(raw)) continue;
    const parsed = NextToolSchema.safeParse(raw);
    if (!parsed.success) return { kind: 'invalid', key, message: describeIssues(parsed.error) };
    return { kind: 'valid', key, next: { tool: parsed.data.tool, arguments: parsed.data.arguments ?? {} } };
  }
  return NONE;
}

function describeIssues(error: z.ZodError): string {
  return formatIssues(error, { root: '(directive)', max: 5 });
}
