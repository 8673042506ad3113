/**
 * Coded errors. A `SluiceError` always says what failed (`code`) and, when a
 * plugin was involved, which plugin and which hook. Several copies of core
 * may be loaded in one process: `SluiceError.is(x)` and `x instanceof
 * SluiceError` both check a brand, not the prototype, so either works.
 */

/** Every code the core raises. Plugins export their own lists. */
export const CoreErrorCode = Object.freeze({
  /** A hook was tapped outside a plugin's `apply()`, or after the server started. */
  HOOKS_LOCKED: 'HOOKS_LOCKED',
  /** Two plugins share one name. */
  DUPLICATE_PLUGIN: 'DUPLICATE_PLUGIN',
  /** A tap names a plugin in `before` that is not registered. */
  UNKNOWN_PLUGIN_REFERENCE: 'UNKNOWN_PLUGIN_REFERENCE',
  /** A plugin object is malformed (no name, no apply, bad mode). */
  INVALID_PLUGIN: 'INVALID_PLUGIN',
  /** A tap's options are malformed (missing name, non-numeric stage). */
  INVALID_TAP: 'INVALID_TAP',
  /** A tool definition is malformed. */
  INVALID_TOOL: 'INVALID_TOOL',
  /** A tool with this name is already registered. */
  DUPLICATE_TOOL: 'DUPLICATE_TOOL',
  /** No tool with this name is exposed (JSON-RPC -32602). */
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  /** Request parameters or guard metadata are malformed (JSON-RPC -32602). */
  INVALID_PARAMS: 'INVALID_PARAMS',
  /** Arguments do not match the tool's input schema (an isError result). */
  INVALID_ARGUMENTS: 'INVALID_ARGUMENTS',
  /** The tool's handler threw (an isError result). */
  TOOL_ERROR: 'TOOL_ERROR',
  /** A plugin threw: a bug, reported as a JSON-RPC internal error. */
  PLUGIN_FAILED: 'PLUGIN_FAILED',
  /** The result does not match the tool's output schema. */
  INVALID_RESULT: 'INVALID_RESULT',
  /** The server was closed. */
  SERVER_CLOSED: 'SERVER_CLOSED',
  /** The server cannot do what was asked in its current state. */
  INVALID_STATE: 'INVALID_STATE',
  /** `listen()` was asked to serve a non-loopback host without authentication. */
  INSECURE_LISTEN: 'INSECURE_LISTEN',
  /** Options passed to a factory failed validation. */
  INVALID_OPTIONS: 'INVALID_OPTIONS',
  /** `ctx.approve()` was called but no approver is registered. */
  APPROVAL_UNAVAILABLE: 'APPROVAL_UNAVAILABLE',
  /** The call was cancelled by the caller. */
  CANCELLED: 'CANCELLED',
  /** The upstream did not answer within the call's `timeoutMs` (an isError result). */
  UPSTREAM_TIMEOUT: 'UPSTREAM_TIMEOUT',
  /** The upstream is not connected now: down at start, or reconnecting (an isError result). */
  UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  /** The connection to the upstream ended while the call ran (an isError result). */
  UPSTREAM_DISCONNECTED: 'UPSTREAM_DISCONNECTED',
  /** The upstream answered `tools/call` with a JSON-RPC error (an isError result). */
  UPSTREAM_ERROR: 'UPSTREAM_ERROR',
  /** The upstream's answer was not a valid tool result (an isError result). */
  UPSTREAM_INVALID_RESPONSE: 'UPSTREAM_INVALID_RESPONSE',
  /** The upstream's answer was larger than the tool's `responseLimitBytes` (an isError result). */
  UPSTREAM_RESPONSE_TOO_LARGE: 'UPSTREAM_RESPONSE_TOO_LARGE',
  /** A credential vault record cannot be opened with the configured keys (a missing or wrong key, or an altered record). */
  VAULT_UNREADABLE: 'VAULT_UNREADABLE',
  /** Sluice could not authenticate to the upstream: discovery, the token endpoint or the upstream refused (an isError result). */
  UPSTREAM_UNAUTHORIZED: 'UPSTREAM_UNAUTHORIZED',
  /**
   * A `per_user` upstream and a caller without a grant there: a URL-mode elicitation (-32042) pointing at the
   * consent page, or an isError result with the link when the client cannot take one.
   */
  UPSTREAM_CONNECT_REQUIRED: 'UPSTREAM_CONNECT_REQUIRED',
  /** The request's `x-sluice-*` headers exclude this tool (an isError result). */
  TOOL_NOT_AVAILABLE: 'TOOL_NOT_AVAILABLE',
  /**
   * A `request` tap hides the item a resource read or subscription, prompt get or completion names: the client
   * gets the error of an item that does not exist (JSON-RPC -32602, as for a resource or prompt nobody has).
   */
  NOT_FOUND: 'NOT_FOUND',
} as const);

export type CoreErrorCode = (typeof CoreErrorCode)[keyof typeof CoreErrorCode];

/** JSON-RPC error codes the core maps to. */
export const RpcCode = Object.freeze({
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const);

export interface SluiceErrorOptions {
  /** The plugin that raised or caused the error. */
  plugin?: string;
  /** The hook in which the error happened. */
  hook?: string;
  /** JSON-RPC code to answer with when this error reaches a client. */
  rpcCode?: number;
  cause?: unknown;
}

const BRAND = Symbol.for('dev.sluice/SluiceError');

export class SluiceError extends Error {
  readonly code: string;
  readonly plugin: string | undefined;
  readonly hook: string | undefined;
  readonly rpcCode: number | undefined;
  declare readonly [BRAND]: true;

  constructor(code: string, message: string, options: SluiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SluiceError';
    this.code = code;
    this.plugin = options.plugin;
    this.hook = options.hook;
    this.rpcCode = options.rpcCode;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Brand check that works across copies of `@sluice/core`. */
  static is(value: unknown): value is SluiceError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /**
   * `x instanceof SluiceError` uses the same brand check as `is()`, so it holds
   * for errors raised by another copy of `@sluice/core` in the process. A
   * subclass keeps the ordinary prototype check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== SluiceError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return SluiceError.is(value);
  }
}

/** A -32602 error: the request's parameters or guard metadata are malformed. */
export function invalidParams(message: string, options: Omit<SluiceErrorOptions, 'rpcCode'> = {}): SluiceError {
  return new SluiceError(CoreErrorCode.INVALID_PARAMS, message, { ...options, rpcCode: RpcCode.INVALID_PARAMS });
}

/** The error for anything asked of a closed server. */
export function serverClosed(hook: string): SluiceError {
  return new SluiceError(CoreErrorCode.SERVER_CLOSED, 'The server is closed', { hook });
}

/** A call to a name no exposed tool has: the client's mistake, so -32602. */
export function unknownTool(name: string, hook?: string): SluiceError {
  return new SluiceError(CoreErrorCode.UNKNOWN_TOOL, `Unknown tool: "${name}"`, {
    rpcCode: RpcCode.INVALID_PARAMS,
    ...(hook === undefined ? {} : { hook }),
  });
}

/** The message of anything thrown, without assuming it is an Error. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, functions and symbols
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * Attributes an error thrown inside a tap to its plugin and hook. An error
 * already attributed (thrown by an inner plugin and passing through) keeps its
 * attribution; a deliberate SluiceError keeps its code.
 */
export function attribute(error: unknown, plugin: string, hook: string): SluiceError {
  if (SluiceError.is(error)) {
    // Already placed: raised by the core, or by an inner plugin and passing through.
    if (error.plugin !== undefined || error.hook !== undefined) return error;
    return new SluiceError(error.code, error.message, {
      plugin,
      hook,
      ...(error.rpcCode === undefined ? {} : { rpcCode: error.rpcCode }),
      cause: error.cause ?? error,
    });
  }
  return new SluiceError(
    CoreErrorCode.PLUGIN_FAILED,
    `Plugin "${plugin}" failed in hook "${hook}": ${messageOf(error)}`,
    { plugin, hook, rpcCode: RpcCode.INTERNAL_ERROR, cause: error },
  );
}
