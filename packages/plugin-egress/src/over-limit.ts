import type { CallContext, CallToolResult } from '@sluice/core';
import { EgressErrorCode } from './errors.js';
import { payloadTooLarge } from './intervention.js';
import { originalSize } from './measure.js';
import { shortenStrings, satisfiesOutputSchema } from './structured-cut.js';
import { truncateResult } from './truncate.js';
import type { Truncation } from './truncate.js';

/**
 * What the guard does with a result over its tool's limit: cut it to fit
 * with the intervention message. When the tool's output schema needs its
 * structuredContent and that does not fit whole, its long strings are
 * shortened if the schema still accepts them; if not, it refuses with
 * PAYLOAD_TOO_LARGE. In audit mode it logs what it would have done and
 * returns the result untouched.
 */
export function overLimit(
  result: CallToolResult,
  ctx: CallContext,
  limitBytes: number,
  audit: boolean,
): CallToolResult | Promise<CallToolResult> {
  // A field too deep to measure (a cycle) counts as infinite: report the largest exact number JSON carries.
  const originalBytes = Math.min(originalSize(result, limitBytes), Number.MAX_SAFE_INTEGER);
  const whole = needsWholeStructure(result, ctx);
  const cut = truncateResult(result, limitBytes, originalBytes, whole);
  if (cut !== undefined) return truncated(result, cut, ctx, { originalBytes, limitBytes, audit });
  return shortenStructured(result, ctx, limitBytes).then((shortened) => {
    const retried = shortened === undefined ? undefined : truncateResult(shortened, limitBytes, originalBytes, true);
    return retried === undefined
      ? refused(result, ctx, { originalBytes, limitBytes, audit })
      : truncated(result, retried, ctx, { originalBytes, limitBytes, audit });
  });
}

interface Sizes {
  readonly originalBytes: number;
  readonly limitBytes: number;
  readonly audit: boolean;
}

/**
 * The result with the long strings of its structuredContent shortened to
 * take at most half the limit, when the tool's output schema still accepts
 * them (a file's text, a page of a document); undefined otherwise.
 */
async function shortenStructured(
  result: CallToolResult,
  ctx: CallContext,
  limitBytes: number,
): Promise<CallToolResult | undefined> {
  const shortened = shortenStrings(result.structuredContent, Math.floor(limitBytes / 2) - STRUCTURED_MARGIN);
  if (shortened === undefined || !(await satisfiesOutputSchema(ctx.tool, shortened))) return undefined;
  return { ...result, structuredContent: shortened as Record<string, unknown> };
}

/** Room kept beside half the limit for the intervention message and the record. */
const STRUCTURED_MARGIN = 512;

function truncated(result: CallToolResult, cut: Truncation, ctx: CallContext, sizes: Sizes): CallToolResult {
  const { originalBytes, limitBytes, audit } = sizes;
  const event = {
    event: 'egress.truncated',
    tool: ctx.tool.name,
    originalBytes,
    keptBytes: cut.keptBytes,
    limitBytes,
    ...(audit ? { audit } : {}),
  };
  ctx.logger.warn(event, audit ? 'audit: egress would have truncated a result' : 'egress truncated a result');
  return audit ? result : cut.result;
}

function refused(result: CallToolResult, ctx: CallContext, sizes: Sizes): CallToolResult {
  const { originalBytes, limitBytes, audit } = sizes;
  const tool = ctx.tool.name;
  const event = {
    event: 'egress.refused',
    tool,
    code: EgressErrorCode.PAYLOAD_TOO_LARGE,
    originalBytes,
    limitBytes,
    ...(audit ? { audit } : {}),
  };
  ctx.logger.warn(
    event,
    audit
      ? 'audit: egress would have refused an oversized structured result'
      : 'egress refused an oversized structured result',
  );
  return audit ? result : payloadTooLarge(tool, { originalBytes, keptBytes: 0, limitBytes });
}

/** A successful result of a tool with an output schema must keep its structuredContent whole. */
function needsWholeStructure(result: CallToolResult, ctx: CallContext): boolean {
  return (
    ctx.tool.definition.outputSchema !== undefined && result.isError !== true && result.structuredContent !== undefined
  );
}
