import { assertBoundedValue } from './limits.js';
import type { ApprovalDecision, ApprovalRequest, Approver } from './approval.js';
import type { Logger } from './logger.js';
import type { Meta } from './meta.js';
import { initialOutgoingMeta, readIncomingMeta } from './meta.js';
import { identityOf } from './auth/identity.js';
import type { CallerIdentity } from './auth/identity.js';
import type { AuthInfo, CallToolResult, ServerContext } from './protocol.js';
import type { SluiceError } from './errors.js';
import { invalidParams } from './errors.js';
import type { SluiceTool } from './tool.js';

/** Runs one call: the handler or upstream proxy, with every plugin's wrapper around it. */
export type Executor = (ctx: CallContext) => Promise<CallToolResult>;

/** Request headers, names in lower case. Empty for stdio and in-process calls. */
export type Headers = Readonly<Record<string, string | undefined>>;

export type Transport = 'http' | 'stdio' | 'in-process';

/** How a call ended, as `settled` observes it. */
export type Outcome =
  /** The tool produced a result (which may itself be a tool error: see `result.isError`). */
  | { readonly status: 'ok'; readonly result: CallToolResult; readonly durationMs: number }
  /** A plugin refused the call with a policy result. */
  | { readonly status: 'refused'; readonly code: string; readonly result: CallToolResult; readonly durationMs: number }
  /** The call failed: a plugin bug, malformed input, or a protocol error. */
  | { readonly status: 'error'; readonly error: SluiceError; readonly durationMs: number }
  /** The caller cancelled. */
  | { readonly status: 'cancelled'; readonly durationMs: number };

/** What a `tools/list` tap knows about the request. */
export interface ListContext {
  readonly headers: Headers;
  readonly authInfo: AuthInfo | undefined;
  /** The verified caller, when the listener authenticated the request. */
  readonly auth: CallerIdentity | undefined;
  readonly transport: Transport;
  readonly logger: Logger;
  /** The exposed tool behind a listed name (its source, policy), for taps that filter by more than the definition. */
  toolOf(name: string): SluiceTool | undefined;
}

export interface CallOptions {
  /** `_meta` for the nested call, on top of this call's outgoing `_meta`. */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** Entries to seed the nested call's `state` with, e.g. to mark it as a step of something. */
  readonly state?: Iterable<readonly [symbol, unknown]>;
  /** Cancels the nested call; default this call's signal. Combine the two when both should. */
  readonly signal?: AbortSignal;
  /**
   * The caller carries the nested call's 2026-07-28 input-required rounds to
   * its client (code mode pauses a script at a call that asks): the nested
   * call is shown this round's `requestState` and `inputResponses` instead of
   * the caller's own, and may answer input-required (see `isCarriedRound`).
   * Without it, a nested call sees its caller's round and cannot ask.
   */
  readonly round?: CarriedRound;
}

/** The round a caller shows a nested call whose input-required rounds it carries (see `CallOptions.round`). */
export interface CarriedRound {
  readonly requestState?: string;
  readonly inputResponses?: Readonly<Record<string, unknown>>;
}

/** The request contexts of nested calls whose rounds their caller carries. */
const carriedRounds = new WeakSet<ServerContext>();

/**
 * Whether an input-required answer of this call reaches a client: the call
 * came from the client itself, or its caller carries its rounds
 * (`CallOptions.round`). An approver asks a 2026-07-28 client only then.
 */
export function isCarriedRound(ctx: Pick<CallContext, 'parent' | 'mcp'>): boolean {
  return ctx.parent === undefined || (ctx.mcp !== undefined && carriedRounds.has(ctx.mcp));
}

/** The request context a nested call is shown when its caller carries its round. */
function carriedView(mcp: ServerContext, round: CarriedRound): ServerContext {
  const state = round.requestState;
  // The accessor's type parameter is the caller's claim (see RequestStateAccessor): the value is the carried string.
  const requestState = (() => state) as ServerContext['mcpReq']['requestState'];
  const inputResponses = round.inputResponses;
  const shown: ServerContext = { ...mcp, mcpReq: { ...mcp.mcpReq, requestState, inputResponses } };
  carriedRounds.add(shown);
  return shown;
}

/** Everything one call carries through the pipeline. */
export interface CallContext {
  /** The request kind, as every request's context carries it (see `RequestContext`). */
  readonly kind: 'tools/call';
  /** The tool being called. */
  readonly tool: SluiceTool;
  /** The arguments, parsed by the tool's input schema when it has one. */
  arguments: Record<string, unknown>;
  /** The incoming `_meta`, attacker-controlled: check types before use. Prototype-free. */
  readonly meta: Readonly<Meta>;
  /** The `_meta` a proxied call forwards upstream; plugins add keys here. Prototype-free. */
  readonly outgoingMeta: Meta;
  /** Tools whose `ctx.call()` led to this call, outermost first. */
  readonly stack: readonly string[];
  /** Fires when the caller cancels or disconnects. */
  readonly signal: AbortSignal;
  readonly requestId: string | number | undefined;
  readonly authInfo: AuthInfo | undefined;
  /** The verified caller (subject, client, scopes, claims or key name); never a credential. */
  readonly auth: CallerIdentity | undefined;
  readonly headers: Headers;
  readonly transport: Transport;
  /** A child of the server's logger, bound to this call. */
  readonly logger: Logger;
  /** The SDK's request context when the call came over MCP (progress, elicitation); absent in-process. */
  readonly mcp: ServerContext | undefined;
  /** The call whose `ctx.call()` started this one. */
  readonly parent: CallContext | undefined;
  /** Per-call scratch space for plugins. Key it with a symbol of your own. */
  readonly state: Map<symbol, unknown>;
  /** Calls another tool of this server through the whole pipeline. */
  call(name: string, args?: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult>;
  /** Asks a person to approve this call (see `Approver`). */
  approve(request: ApprovalRequest): Promise<ApprovalDecision>;
}

/** How a call reaches the pipeline. */
export interface CallRequest {
  readonly meta?: unknown;
  readonly signal?: AbortSignal;
  readonly requestId?: string | number;
  readonly authInfo?: AuthInfo;
  readonly headers?: Headers;
  readonly transport?: Transport;
  readonly mcp?: ServerContext;
  readonly parent?: CallContext;
  /** Entries to seed the call's `state` with (a transport passing its own request along). */
  readonly state?: Iterable<readonly [symbol, unknown]>;
}

/** What a context needs from its server. */
export interface ContextRuntime {
  readonly logger: Logger;
  dispatch(name: string, args: unknown, request: CallRequest): Promise<CallToolResult>;
  approver(): Approver;
}

/** A call's arguments: absent means none; anything but an object is -32602. */
export function callArguments(args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) return {};
  if (typeof args !== 'object' || Array.isArray(args)) throw invalidParams('Tool arguments must be an object');
  return args as Record<string, unknown>;
}

/**
 * A call's `_meta`, read once its arguments and `_meta` are found within
 * bounds (else -32602). Whatever tool the call names: asked before the tool
 * is looked up, so that a caller learns the same of a tool hidden from it as
 * of one that does not exist.
 */
export function checkedMeta(args: Record<string, unknown>, meta: unknown): Readonly<Meta> {
  assertBoundedValue(args, 'arguments');
  assertBoundedValue(meta, '_meta');
  return readIncomingMeta(meta);
}

const NO_HEADERS: Headers = Object.freeze({});
const NEVER = new AbortController().signal;
const EMPTY_STACK: readonly string[] = Object.freeze([]);

export class Context implements CallContext {
  // An own field, not a getter: a wrapper that spreads the context keeps it.
  readonly kind = 'tools/call' as const;
  arguments: Record<string, unknown>;
  readonly meta: Readonly<Meta>;
  readonly outgoingMeta: Meta;
  readonly stack: readonly string[];
  readonly signal: AbortSignal;
  readonly requestId: string | number | undefined;
  readonly authInfo: AuthInfo | undefined;
  readonly headers: Headers;
  readonly transport: Transport;
  readonly mcp: ServerContext | undefined;
  readonly parent: CallContext | undefined;
  private _logger: Logger | undefined;
  private _state: Map<symbol, unknown> | undefined;

  /** `args` as `callArguments()` and `meta` as `checkedMeta()` gave them back: checked before the tool was looked up. */
  constructor(
    private readonly runtime: ContextRuntime,
    readonly tool: SluiceTool,
    args: Record<string, unknown>,
    meta: Readonly<Meta>,
    request: CallRequest,
  ) {
    this.arguments = args;
    this.meta = meta;
    this.outgoingMeta = initialOutgoingMeta(this.meta);
    const parent = request.parent;
    this.parent = parent;
    this.stack = parent ? [...parent.stack, parent.tool.name] : EMPTY_STACK;
    this.signal = request.signal ?? parent?.signal ?? NEVER;
    this.requestId = request.requestId ?? parent?.requestId;
    this.authInfo = request.authInfo ?? parent?.authInfo;
    this.headers = request.headers ?? parent?.headers ?? NO_HEADERS;
    this.transport = request.transport ?? parent?.transport ?? 'in-process';
    this.mcp = request.mcp ?? parent?.mcp;
    if (request.state) this._state = new Map(request.state);
  }

  /** The verified caller, when the listener authenticated the request. */
  get auth(): CallerIdentity | undefined {
    return identityOf(this.authInfo);
  }

  // Built on first use: most calls never log.
  get logger(): Logger {
    const caller = this.auth?.subject;
    this._logger ??= this.runtime.logger.child({
      tool: this.tool.name,
      requestId: this.requestId,
      ...(caller === undefined ? {} : { caller }),
    });
    return this._logger;
  }

  get state(): Map<symbol, unknown> {
    this._state ??= new Map();
    return this._state;
  }

  call(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<CallToolResult> {
    const meta: Meta = Object.create(null) as Meta;
    for (const key of Object.keys(this.outgoingMeta)) meta[key] = this.outgoingMeta[key];
    if (options.meta)
      for (const key of Object.keys(options.meta)) if (key !== '__proto__') meta[key] = options.meta[key];
    return this.runtime.dispatch(name, args, {
      meta,
      parent: this,
      ...(options.round && this.mcp ? { mcp: carriedView(this.mcp, options.round) } : {}),
      ...(options.state ? { state: options.state } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  approve(request: ApprovalRequest): Promise<ApprovalDecision> {
    return this.runtime.approver().approve(this, request);
  }
}
