/**
 * The JSON-RPC errors core answers clients with. An SDK server (v1 or v2)
 * sends any error its handler throws as `{ code, message, data }` when
 * `code` is an integer, so core builds its own rather than the SDK's
 * protocol error: a v1 server adopting a guard never loads SDK v2 to fail a
 * call.
 */

import { RpcCode } from './errors.js';

/** The JSON-RPC code of a request the server refuses as a whole (a feature request a plugin refused). */
export const INVALID_REQUEST = -32600;

const BRAND = Symbol.for('dev.sluice/RpcError');

/** Where the MCP SDK (v2) marks its error classes, the same symbol in every copy of it. */
const SDK_BRANDS = Symbol.for('mcp.sdk.errorBrands');

/** An error a client gets as a JSON-RPC error: its code, a message meant for the client, and data. */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  declare readonly [BRAND]: true;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Brand check that works across copies of `@sluice/core`. */
  static is(value: unknown): value is RpcError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** `x instanceof RpcError` is the brand check of `is()`, as for `SluiceError`. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== RpcError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return RpcError.is(value);
  }
}

/** A JSON-RPC error as it goes on the wire. */
export type RpcErrorLike = Error & { readonly code: number; readonly data?: unknown };

/**
 * Whether a value is a JSON-RPC error meant for a client: core's `RpcError`,
 * or the SDK's `ProtocolError` (or one of its subclasses) from any copy of
 * the SDK, told by the brand the SDK stamps on it. Core does not load the
 * SDK to ask.
 */
export function isRpcError(value: unknown): value is RpcErrorLike {
  if (RpcError.is(value)) return true;
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, SDK_BRANDS)) return false;
  const brands = (value as Record<symbol, unknown>)[SDK_BRANDS] as { has?: unknown } | undefined;
  return typeof brands?.has === 'function' && (brands as ReadonlySet<unknown>).has('mcp.ProtocolError');
}

/** The error of a resource that does not exist, as the SDK's handlers answer it: -32602 with the URI as data. */
export function resourceNotFound(uri: string): RpcError {
  return new RpcError(RpcCode.INVALID_PARAMS, `Resource not found: ${uri}`, { uri });
}
