// Types and constants only: this module loads with core's index, where adopt() must not load the v2 SDK.
import type { CallerIdentity } from './auth/identity.js';
import type { CallContext, Headers } from './context.js';
import type { FeatureMethod } from './features/feature-context.js';
import type { Logger } from './logger.js';
import type { Meta } from './meta.js';
import type { AuthInfo } from './protocol.js';
import type { SluiceTool } from './tool.js';

/** Every kind of request a client makes toward a tool, an upstream item or a local handler. */
export type RequestKind = 'tools/call' | FeatureMethod;

/** The kinds the `guard` hook wraps: every request that acts on one item (lists are filtered, not guarded). */
export type GuardedKind = Exclude<RequestKind, 'resources/list' | 'resources/templates/list' | 'prompts/list'>;

/** The request kinds the `guard` hook wraps, in a stable order. */
export const GUARDED_KINDS: readonly GuardedKind[] = Object.freeze([
  'tools/call',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
]);

/**
 * What a `guard` tap plans for, once: one tool, or one kind of feature
 * request to one upstream (undefined: the server's own handlers).
 */
export type RequestTarget =
  | { readonly kind: 'tools/call'; readonly tool: SluiceTool; readonly upstream: string | undefined }
  | { readonly kind: Exclude<GuardedKind, 'tools/call'>; readonly upstream: string | undefined };

/**
 * What every guarded request carries: a tool call's `CallContext` has all of
 * it; a feature request's context adds the item it names.
 */
export interface RequestContext {
  /** The kind of request: `tools/call` on a tool call's `CallContext`. */
  readonly kind: GuardedKind;
  /**
   * The upstream that serves a feature request (undefined: the server's own
   * handlers); absent on tool calls, whose tool's `source` names it.
   */
  readonly upstream?: string | undefined;
  /** The verified caller, when the listener authenticated the request. */
  readonly auth: CallerIdentity | undefined;
  readonly authInfo: AuthInfo | undefined;
  /** The request's headers, names in lower case; empty for stdio and in-process requests. */
  readonly headers: Headers;
  /** Fires when the client cancels the request or the connection drops. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /**
   * The item a feature request names: the canonical resource URI (see
   * `canonicalUri`), the prompt's exposed name, or a completion's prompt
   * name or URI (template); on `logging/setLevel`, the level asked for
   * (`debug` ... `emergency`); absent on tool calls, whose tool the plan names.
   */
  readonly target?: string;
  /** On `completion/complete`: whether `target` names a prompt or a resource (template). */
  readonly completing?: 'prompt' | 'resource';
  /**
   * The request's incoming `_meta`, attacker-controlled: check types before
   * use. Prototype-free, and bounded as a tool call's is (at most 128 keys,
   * and the nesting and size limits of `arguments`): a `_meta` past them is
   * a -32602 before any tap runs.
   */
  readonly meta: Readonly<Meta>;
  /**
   * The `_meta` the request sends upstream; `request` taps add keys here.
   * Prototype-free. A tool call's starts with the incoming W3C trace context;
   * a feature request's starts empty, and the gateway sends it (when a tap
   * wrote to it) as the `_meta` of the request it relays to the upstream,
   * its keys over those the relay sends itself (a 2026-07-28 round's). The
   * server's own handlers (`upstream` undefined) send nothing on.
   */
  readonly outgoingMeta: Meta;
  /**
   * Where the gateway stops reading an upstream's answer to a feature request
   * (`resources/read`, `prompts/get`, `completion/complete`), in bytes: a
   * `guard` wrapper sets it on the context it passes to `next`, and an answer
   * past it is refused with `UPSTREAM_RESPONSE_TOO_LARGE` instead of being
   * read whole. Tool calls take theirs from `SluiceTool.responseLimitBytes`.
   */
  readonly responseLimitBytes?: number;
}

/**
 * Runs one guarded request. A wrapper answers a refusal by returning a
 * result built by `refusal()`: a tool call's client reads it as a tool
 * result; any other request's client gets a JSON-RPC error carrying the
 * same code and message. Anything else is the request's own answer.
 */
export type RequestExecutor = (ctx: RequestContext) => Promise<unknown>;

/**
 * Whether a request is a tool call: its context is then the call's
 * `CallContext` (tool, arguments, `_meta`, `call()`, `approve()`). A `request`
 * or `response` tap for `kinds: ['tools/call']` narrows with it.
 */
export function isToolCall(ctx: RequestContext): ctx is CallContext {
  return ctx.kind === 'tools/call';
}
