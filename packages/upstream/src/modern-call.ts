import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY, ProtocolError } from '@modelcontextprotocol/server';
import { CoreErrorCode, SluiceError, invalidParams } from '@sluice/core';
import type { ServerContext } from '@sluice/core';
import { isInputRequired } from '@sluice/core/internal';
import { MAX_STATE_CHARS, RoundStateSeal } from './round-state.js';
import { wireStateOf } from '@sluice/core/internal';
import { CONNECT_INPUT_KEY } from './oauth/errors.js';

/** What a call of a 2026-07-28 client adds to the request sent upstream: the input it answered and the upstream's state. */
export interface RoundParams {
  readonly inputResponses?: Record<string, unknown>;
  readonly requestState?: string;
  /** The caller's own client capabilities, so that the upstream asks only for what the caller can give. */
  readonly meta: Record<string, unknown>;
}

/** Whether the request came from a 2026-07-28 client (it carried the per-request envelope). */
export function isModernCaller(mcp: ServerContext | undefined): boolean {
  const envelope = mcp?.mcpReq.envelope as Readonly<Record<string, unknown>> | undefined;
  return typeof envelope?.[PROTOCOL_VERSION_META_KEY] === 'string';
}

/**
 * The round-trip fields of a retried call, for the upstream: the client's
 * answers as they are, and the upstream's own state out of Sluice's sealed
 * wrapper. A state Sluice did not seal (a risk approval's) is not the
 * upstream's; a sealed state that was altered, has expired or names another
 * upstream or tool is refused with -32602.
 */
export function roundParams(
  mcp: ServerContext | undefined,
  upstream: string,
  target: string,
  seal: RoundStateSeal,
): RoundParams {
  const req = mcp?.mcpReq;
  const envelope = req?.envelope as Readonly<Record<string, unknown>> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  const meta = capabilities === undefined ? {} : { [CLIENT_CAPABILITIES_META_KEY]: capabilities };
  const wire = wireStateOf(mcp);
  let requestState: string | undefined;
  if (typeof wire === 'string' && RoundStateSeal.isOurs(wire)) {
    const opened = seal.open(wire, upstream, target);
    if (typeof opened === 'string')
      throw invalidParams(`requestState was refused: ${opened}. Call the tool again without it.`);
    requestState = opened.state;
  }
  const inputResponses = req?.inputResponses;
  return {
    ...(inputResponses === undefined ? {} : { inputResponses }),
    ...(requestState === undefined ? {} : { requestState }),
    meta,
  };
}

/**
 * An upstream's input-required result, its state sealed to this upstream
 * and target (a tool's original name, `prompt:<name>`, `resource:<uri>`);
 * other results as they are.
 */
export function sealed<T>(result: T, upstream: string, target: string, seal: RoundStateSeal, mcp?: ServerContext): T {
  if (!isInputRequired(result)) return result;
  const state = (result as { requestState?: unknown }).requestState;
  if (state !== undefined && (typeof state !== 'string' || state.length > MAX_STATE_CHARS))
    throw new SluiceError(
      CoreErrorCode.UPSTREAM_INVALID_RESPONSE,
      `Upstream "${upstream}" answered "${target}" with a requestState Sluice does not carry (not a string, or over ${MAX_STATE_CHARS} characters)`,
      { hook: 'call' },
    );
  // Another party's state this round carried (what the pipeline was shown) goes along, to be shown again.
  const shown: unknown = mcp?.mcpReq.requestState();
  const carried =
    typeof shown === 'string' && !RoundStateSeal.isOurs(shown) && shown.length <= MAX_STATE_CHARS ? shown : undefined;
  const wrapped = seal.seal({
    upstream,
    tool: target,
    ...(state === undefined ? {} : { state }),
    ...(carried === undefined ? {} : { carried }),
  });
  return { ...result, requestState: wrapped };
}

/**
 * An upstream's JSON-RPC error to a 2026-07-28 call, passed to the client as
 * the same error (code, message, data): a missing capability (-32021) or
 * refused input must reach the client that can act on it.
 */
export function relayedError(error: unknown, redact: (text: string) => string): SluiceError | undefined {
  // The SDK's error classes are brand-matched: this matches what the client package raises.
  if (!(error instanceof ProtocolError)) return undefined;
  const message = redact(error.message.replace(/^MCP error -?\d+: /, ''));
  return new SluiceError(CoreErrorCode.UPSTREAM_ERROR, message, {
    rpcCode: error.code,
    hook: 'call',
    cause: new ProtocolError(error.code, message, error.data),
  });
}

/** A round's answers without Sluice's own connect question's, which is not the upstream's to read. */
export function withoutConnectAnswer(round: RoundParams): RoundParams {
  const answers = round.inputResponses;
  if (answers?.[CONNECT_INPUT_KEY] === undefined) return round;
  const kept = Object.entries(answers).filter(([key]) => key !== CONNECT_INPUT_KEY);
  const rest: RoundParams = {
    meta: round.meta,
    ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
  };
  return kept.length > 0 ? { ...rest, inputResponses: Object.fromEntries(kept) } : rest;
}
