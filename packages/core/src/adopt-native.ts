import type { Transport } from './context.js';
import type { AuthInfo } from './protocol.js';

/**
 * What `adopt()` reads of the SDK servers it wraps. Both the v1 package and
 * v2 keep request handlers in a map on the low-level server, keyed by method,
 * taking the raw request (validated inside the handler) and v1's `extra` or
 * v2's `ctx`.
 */
export type NativeHandler = (request: NativeRequest, extra: NativeExtra) => Promise<unknown>;

export interface NativeRequest {
  jsonrpc?: '2.0';
  id?: string | number;
  method: string;
  params?: {
    name?: string;
    arguments?: Record<string, unknown>;
    _meta?: Record<string, unknown>;
    [key: string]: unknown;
  };
}

/** v1 passes `extra`, v2 passes `ctx`: read either. */
export interface NativeExtra {
  signal?: AbortSignal;
  requestId?: string | number;
  authInfo?: AuthInfo;
  requestInfo?: { headers?: Record<string, string | string[] | undefined> };
  mcpReq?: { id?: string | number; signal?: AbortSignal };
  http?: { authInfo?: AuthInfo; req?: { headers: { forEach(fn: (value: string, key: string) => void): void } } };
}

export function authInfoOf(extra: NativeExtra): AuthInfo | undefined {
  return extra.http?.authInfo ?? extra.authInfo;
}

export function transportOf(extra: NativeExtra): Transport {
  return extra.http || extra.requestInfo ? 'http' : 'in-process';
}
