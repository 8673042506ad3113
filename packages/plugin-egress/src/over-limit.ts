import type { CallContext, CallToolResult } from '@sluice/core';
import { EgressErrorCode } from './errors.js';
import { payloadTooLarge } from './intervention.js';
import { originalSize } from './measure.js';
import { truncateResult } from './truncate.js';

/**
 * What the guard does with a result over its tool's limit: cut it to fit
 * with the intervention message, or, when the tool's output schema needs its
 * structuredContent whole and that does not fit, refuse with
 * PAYLOAD_TOO_LARGE. In audit mode it logs what it would have done and
 * returns the result untouched.
 */
export function overLimit(
  result: CallToolResult,
  ctx: CallContext,
  limitBytes: number,
  audit: boolean,
): CallToolResult {
  const tool = ctx.tool.name;
  // A field too deep to measure (a cycle) counts as infinite: report the largest exact number JSON carries.
  const originalBytes = Math.min(originalSize(result, limitBytes), Number.MAX_SAFE_INTEGER);
  const cut = truncateResult(result, limitBytes, originalBytes, needsWholeStructure(result, ctx));
  if (cut === undefined) {
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
  const event = {
    event: 'egress.truncated',
    tool,
    originalBytes,
    keptBytes: cut.keptBytes,
    limitBytes,
    ...(audit ? { audit } : {}),
  };
  ctx.logger.warn(event, audit ? 'audit: egress would have truncated a result' : 'egress truncated a result');
  return audit ? result : cut.result;
}

/** A successful result of a tool with an output schema must keep its structuredContent whole. */
function needsWholeStructure(result: CallToolResult, ctx: CallContext): boolean {
  return (
    ctx.tool.definition.outputSchema !== undefined && result.isError !== true && result.structuredContent !== undefined
  );
}
