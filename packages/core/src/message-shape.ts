import type { JSONRPCMessage } from '@modelcontextprotocol/server';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isId = (id: unknown): id is string | number => typeof id === 'string' || Number.isSafeInteger(id);

/** Whether every key of the envelope is one of the allowed ones (the schema refuses others). */
function keysWithin(value: Record<string, unknown>, a: string, b: string, c?: string): boolean {
  for (const key in value) if (key !== 'jsonrpc' && key !== a && key !== b && key !== c) return false;
  return true;
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/**
 * `_meta`, when present in params or a result, as the schema wants it: an object whose progress token is
 * a string or an integer and whose related task names its id as a string.
 */
function metaFits(holder: Record<string, unknown>): boolean {
  const meta = holder._meta;
  if (meta === undefined) return true;
  if (!isObject(meta)) return false;
  if (meta.progressToken !== undefined && !isId(meta.progressToken)) return false;
  const related = meta[RELATED_TASK];
  return related === undefined || (isObject(related) && typeof related.taskId === 'string');
}

/**
 * A parsed JSON value as a JSON-RPC message: a cheap look at the envelope
 * (version, id, method and params, result or error, no other keys) first,
 * and the SDK's full message schema (`strict`, the caller's SDK's
 * `parseJSONRPCMessage`) only when that look fails, for its error. What is inside params and results is checked later, per method,
 * where the SDK parses them; the envelope check accepts nothing the schema
 * refuses at the envelope.
 */
export function asJsonRpcMessage(value: unknown, strict: (value: unknown) => JSONRPCMessage): JSONRPCMessage {
  if (isObject(value) && value.jsonrpc === '2.0') {
    const { id, params, result, error } = value;
    if (typeof value.method === 'string') {
      if (
        (id === undefined || isId(id)) &&
        (params === undefined || (isObject(params) && metaFits(params))) &&
        keysWithin(value, 'id', 'method', 'params')
      )
        return value as unknown as JSONRPCMessage;
    } else if (isId(id) && isObject(result) && metaFits(result) && keysWithin(value, 'id', 'result')) {
      return value as unknown as JSONRPCMessage;
    } else if (
      (id === undefined || isId(id)) &&
      isObject(error) &&
      Number.isSafeInteger(error.code) &&
      typeof error.message === 'string' &&
      keysWithin(value, 'id', 'error')
    ) {
      return value as unknown as JSONRPCMessage;
    }
  }
  return strict(value);
}
