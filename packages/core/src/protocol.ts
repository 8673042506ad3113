/** The MCP types the core speaks in, from the official SDK. */
export type {
  AuthInfo,
  CallToolResult,
  ContentBlock,
  ServerContext,
  Tool,
  ToolAnnotations,
} from '@modelcontextprotocol/server';

/** A JSON object, as tool arguments and `_meta` are on the wire. */
export type JsonObject = Record<string, unknown>;

/**
 * Whether a tool's answer is a 2026-07-28 input request (`resultType:
 * 'input_required'`): a question for the client, carried as it is, not a
 * result to check or rewrite. Read from the wire shape here, so that a server
 * that never speaks to an SDK v2 client need not load the SDK to tell.
 */
export function isInputRequired(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { resultType?: unknown }).resultType === 'input_required'
  );
}

/**
 * Whether a JSON-RPC message names this method: the cheap test before a
 * schema check. Most messages are not `initialize`, and a schema that fails
 * builds a whole error to say so.
 */
export function namesMethod(value: unknown, method: string): boolean {
  return typeof value === 'object' && value !== null && (value as { method?: unknown }).method === method;
}
