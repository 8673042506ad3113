// Raw JSON-RPC over HTTP and stdio, as the SDK's own client puts it on the wire,
// and the checks every answer must pass.

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';

/** The per-request `_meta` envelope a 2026-07-28 request carries. */
export const ENVELOPE = Object.freeze({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'robustness', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

export interface JsonRpcResponse {
  readonly jsonrpc: '2.0';
  readonly id: string | number | null;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** A well-formed JSON-RPC response: a result or an error with an integer code and a message, never both. */
export function isResponse(value: unknown): value is JsonRpcResponse {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0' || !('id' in message)) return false;
  const hasResult = typeof message.result === 'object' && message.result !== null;
  const error = message.error as Record<string, unknown> | undefined;
  const hasError = error !== undefined && Number.isInteger(error.code) && typeof error.message === 'string';
  return hasResult !== hasError;
}

/** Any JSON-RPC message a server may send: a response, a notification or a request of its own. */
export function isMessage(value: unknown): boolean {
  if (isResponse(value)) return true;
  const message = value as Record<string, unknown> | null;
  return (
    typeof message === 'object' && message !== null && message.jsonrpc === '2.0' && typeof message.method === 'string'
  );
}

/**
 * The id a server must answer under: the text is a well-formed JSON-RPC
 * request (version "2.0", a string or safe-integer id, a string method,
 * params absent or an object). Anything else is not a request, and the
 * transport may drop it; the tests then check the server still answers the
 * next request.
 */
export function answerableId(body: string): string | number | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const message = parsed as Record<string, unknown>;
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string' || 'result' in message || 'error' in message)
    return undefined;
  const params = message.params;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params)))
    return undefined;
  const id = message.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : undefined;
}

export interface HttpAnswer {
  readonly status: number;
  readonly contentType: string;
  /** Every JSON-RPC message in the body (one for JSON, each event for SSE). */
  readonly messages: unknown[];
  readonly raw: string;
}

/** Headers the SDK's client sends with a 2026-07-28 request. */
export function modernHeaders(method: string | undefined, name: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'mcp-protocol-version': MODERN };
  if (method !== undefined) headers['mcp-method'] = method;
  if (name !== undefined) headers['mcp-name'] = name;
  return headers;
}

export async function post(
  url: URL,
  body: string | Uint8Array,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<HttpAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const raw = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  return { status: response.status, contentType, messages: parseBody(raw, contentType), raw };
}

function parseBody(raw: string, contentType: string): unknown[] {
  if (raw.trim() === '') return [];
  if (contentType.includes('text/event-stream')) {
    return raw
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .filter((data) => data !== '')
      .map((data) => safeParse(data));
  }
  return [safeParse(raw)];
}

/** An unparseable body stays visible as a marker the checks reject. */
function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { unparseable: text.slice(0, 200) };
  }
}

/** Calls a tool of the server under test with a well-formed 2026-07-28 request. */
export async function callTool(
  url: URL,
  name: string,
  args: Record<string, unknown>,
  timeoutMs = 30_000,
  signal?: AbortSignal,
): Promise<JsonRpcResponse> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args, _meta: ENVELOPE },
  });
  const response = await fetch(url, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...modernHeaders('tools/call', name),
    },
    signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
  });
  const answer = parseBody(await response.text(), response.headers.get('content-type') ?? '').find(isResponse);
  if (!answer) throw new Error(`no JSON-RPC response to ${name} (HTTP ${response.status})`);
  return answer;
}

/** The `_meta["dev.sluice/error"].code` of a refused call, if it was refused. */
export function refusalCode(response: JsonRpcResponse): string | undefined {
  const meta = response.result?._meta as Record<string, { code?: string }> | undefined;
  return meta?.['dev.sluice/error']?.code;
}
