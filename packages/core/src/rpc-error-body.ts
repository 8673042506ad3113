/**
 * A JSON-RPC error message, serialized: what a transport answers itself with
 * when a request never reaches the SDK (malformed, too large, no session).
 */
export function rpcErrorBody(id: string | number | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}
