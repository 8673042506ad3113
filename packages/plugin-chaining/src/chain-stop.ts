import { CoreErrorCode, MetaKey, refusal } from '@sluice/core';
import type { CallToolResult, RefusalMeta } from '@sluice/core';
import { describeChain } from './chain-record.js';
import type { ChainState } from './chain-state.js';
import type { NextTool, NextToolKey } from './directive.js';
import { ChainingErrorCode } from './errors.js';

/** Why a chain stopped before its next call ran. */
export interface ChainStop {
  readonly code: ChainingErrorCode;
  /** What happened, in a sentence the model can act on. */
  readonly message: string;
  readonly suggestion: string;
  /** The directive that did not run. */
  readonly pending?: NextTool;
  /** When another guard refused the chained call: its refusal. */
  readonly refusal?: RefusalMeta;
}

/** A call of the chain that produced a result: the origin or a step. */
export interface Landed {
  readonly tool: string;
  readonly result: CallToolResult;
}

const MAX_SHOWN_ARGUMENTS = 300;

/** The arguments as JSON for a sentence, shortened; never throws. */
function shown(args: Record<string, unknown>): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a toJSON() on hostile arguments can make JSON.stringify answer undefined
    const json = JSON.stringify(args) ?? '{}';
    return json.length > MAX_SHOWN_ARGUMENTS ? `${json.slice(0, MAX_SHOWN_ARGUMENTS)}...` : json;
  } catch {
    return '(not serializable)';
  }
}

/** A JSON copy of a directive for `_meta`, or nothing if it does not survive JSON. */
function jsonCopy(next: NextTool): unknown {
  try {
    return JSON.parse(JSON.stringify({ tool: next.tool, arguments: next.arguments })) as unknown;
  } catch {
    return undefined;
  }
}

/** A refusal's message, which may come from another server: text, and not too much of it. */
function brief(message: unknown): string {
  const text = typeof message === 'string' ? message : 'no reason given';
  return text.length > 500 ? `${text.slice(0, 500)}...` : text;
}

const callYourself = (next: NextTool, when = 'if it should still run'): string =>
  `Call "${next.tool}" yourself ${when}, with arguments ${shown(next.arguments)}.`;

export const stops = {
  tooDeep: (next: NextTool, maxDepth: number): ChainStop => ({
    code: ChainingErrorCode.TOO_DEEP,
    message: `The chain reached its limit of ${maxDepth} chained calls, so "${next.tool}" was not called.`,
    suggestion: callYourself(next),
    pending: next,
  }),
  unknownTool: (next: NextTool): ChainStop => ({
    code: ChainingErrorCode.UNKNOWN_TOOL,
    message: `"${next.tool}" was named as the next tool, but this server exposes no tool of that name.`,
    suggestion: 'Continue with the tools this server lists; the directive was faulty.',
    pending: next,
  }),
  targetDenied: (next: NextTool): ChainStop => ({
    code: ChainingErrorCode.TARGET_DENIED,
    message: `"${next.tool}" may not be called by a chain on this server.`,
    suggestion: callYourself(next),
    pending: next,
  }),
  circular: (next: NextTool): ChainStop => ({
    code: ChainingErrorCode.CIRCULAR,
    message: `"${next.tool}" already ran in this chain with the same arguments; running it again would loop.`,
    suggestion: `Use the results so far; do not call "${next.tool}" again with the same arguments.`,
    pending: next,
  }),
  invalidArguments: (next: NextTool, detail: string): ChainStop => ({
    code: ChainingErrorCode.INVALID_ARGUMENTS,
    message: `The arguments for "${next.tool}" do not match its input schema: ${detail}.`,
    suggestion: `Call "${next.tool}" yourself with corrected arguments if it should still run.`,
    pending: next,
  }),
  unusableArguments: (next: NextTool, detail: string): ChainStop => ({
    code: ChainingErrorCode.INVALID_DIRECTIVE,
    message: `The next-tool directive for "${next.tool}" carries unusable arguments (${detail}), so it was not called.`,
    suggestion: 'Continue from the result below without that call.',
    pending: next,
  }),
  invalidDirective: (key: NextToolKey, detail: string): ChainStop => ({
    code: ChainingErrorCode.INVALID_DIRECTIVE,
    message: `The next-tool directive in _meta["${key}"] is malformed (${detail}), so no further tool was called.`,
    suggestion: 'Continue from the result below; the directive should be { tool, arguments }.',
  }),
  rejected: (next: NextTool, detail: string): ChainStop => ({
    code: ChainingErrorCode.STEP_REFUSED,
    message: `The chained call to "${next.tool}" was rejected as invalid: ${detail}`,
    suggestion: `Check the tools the server lists before calling "${next.tool}" yourself.`,
    pending: next,
  }),
  stepRefused: (next: NextTool, refused: RefusalMeta): ChainStop => {
    // The core checked the arguments of a local tool before any guard ran: the same stop as our own check.
    if (refused.code === CoreErrorCode.INVALID_ARGUMENTS)
      return { ...stops.invalidArguments(next, ''), message: `${brief(refused.message)}.` };
    const after =
      typeof refused.retryAfterMs === 'number'
        ? `after ${Math.ceil(refused.retryAfterMs)} ms`
        : 'once that is resolved';
    return {
      code: ChainingErrorCode.STEP_REFUSED,
      message: `The chained call to "${next.tool}" was refused (${refused.code}): ${brief(refused.message)}`,
      suggestion: callYourself(next, after),
      pending: next,
      refusal: refused,
    };
  },
};

/**
 * The result a stopped chain returns: an `isError` refusal that lists the
 * chain so far and why it stopped, followed by the output of the last call
 * that ran, so nothing that ran is lost.
 */
export function stoppedResult(state: ChainState, stop: ChainStop, last: Landed): CallToolResult {
  const record = state.toRecord(stop.code);
  const details: Record<string, unknown> = {};
  if (stop.pending) details.pending = jsonCopy(stop.pending);
  if (stop.refusal) details.step = { tool: stop.pending?.tool, ...stop.refusal };
  const result = refusal({
    code: stop.code,
    message: `${stop.message} Chain so far: ${describeChain(record)}.`,
    suggestion: stop.suggestion,
    details,
  });
  const lastContent = Array.isArray(last.result.content) ? last.result.content : [];
  result.content.push({ type: 'text', text: `Result of "${last.tool}", the last call that ran:` }, ...lastContent);
  (result._meta as Record<string, unknown>)[MetaKey.CHAIN] = record;
  return result;
}

/** The result of a chain that ended normally: the last result, with the chain record. */
export function finishedResult(state: ChainState, result: CallToolResult): CallToolResult {
  if (state.steps.length === 0) return result;
  // The result may come from an upstream: check its _meta's shape rather than trust the type.
  const raw: unknown = result._meta;
  const meta = typeof raw === 'object' && raw !== null ? raw : {};
  // A literal key (MetaKey.CHAIN): a computed one builds a slower object on every chain.
  return { ...result, _meta: { ...meta, 'dev.sluice/chain': state.toRecord() } };
}
