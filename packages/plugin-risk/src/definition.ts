/**
 * A tool definition as the risk engine reads it: the fields of an MCP `Tool`
 * that reach a model, all optional but the name, and typed loosely because an
 * upstream wrote them.
 */
export interface ToolShape {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: Readonly<Record<string, unknown>> | undefined;
}

/** The four behaviour hints of the MCP tool annotations, when given as booleans. */
export const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
