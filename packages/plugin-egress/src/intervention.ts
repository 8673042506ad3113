import { CoreErrorCode, MetaKey, refusal, toolError } from '@sluice/core';
import { UPSTREAM_READ_FACTOR } from './read-factor.js';
import type { CallToolResult } from '@sluice/core';
import { EgressErrorCode } from './errors.js';

const KIB = 1_024;
const MIB = KIB * 1_024;
const GIB = MIB * 1_024;

/** A size as the intervention message states it: `2.0MB`, `64.0KB` (binary units, one decimal). */
export function formatBytes(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(1)}GB`;
  if (bytes >= MIB) return `${(bytes / MIB).toFixed(1)}MB`;
  if (bytes >= KIB) return `${(bytes / KIB).toFixed(1)}KB`;
  return `${bytes}B`;
}

/** The message appended to a truncated result, telling the model how to ask again. */
export function interventionText(limitBytes: number): string {
  return (
    `[SYSTEM INTERVENTION: Payload truncated at ${formatBytes(limitBytes)} to prevent memory crash. ` +
    'You MUST use pagination (limit/offset) or filters to retrieve smaller result sets.]'
  );
}

/** What `_meta["dev.sluice/egress"]` says about a result the guard cut or refused. */
export interface EgressRecord {
  /** The size of the result the tool returned, as the guard counts it. */
  readonly originalBytes: number;
  /** The size of what was kept of it, before the intervention message and this record. */
  readonly keptBytes: number;
  /** The limit that applied. */
  readonly limitBytes: number;
}

/**
 * The refusal that replaces a result whose structuredContent would have to
 * be cut: the tool's output schema needs it whole, so a partial one would
 * be an invalid result.
 */
export function payloadTooLarge(tool: string, record: EgressRecord): CallToolResult {
  const result = refusal({
    code: EgressErrorCode.PAYLOAD_TOO_LARGE,
    message:
      `Tool "${tool}" returned ${formatBytes(record.originalBytes)}, over its ${formatBytes(record.limitBytes)} limit ` +
      '(maxPayloadBytes); its structured output cannot be cut without breaking its output schema.',
    suggestion: 'Use pagination (limit/offset) or filters to retrieve smaller result sets.',
    details: { originalBytes: record.originalBytes, limitBytes: record.limitBytes },
  });
  // The same object, so that the pipeline still knows it for a refusal by policy.
  result._meta = { ...result._meta, [MetaKey.EGRESS]: record };
  return result;
}

/**
 * The proxy's refusal of an upstream answer past the read cap, said in the
 * terms of the setting that put the cap there: the cap is a multiple of
 * `maxPayloadBytes`, a number the config does not hold.
 */
export function unreadAnswer(result: CallToolResult, tool: string, limitBytes: number): CallToolResult {
  const meta = result._meta?.[MetaKey.ERROR] as Record<string, unknown> | undefined;
  const cap = limitBytes * UPSTREAM_READ_FACTOR;
  const message =
    `The answer of tool "${tool}" exceeded ${cap} bytes (${UPSTREAM_READ_FACTOR} × its maxPayloadBytes of ` +
    `${limitBytes}) and was not read further.`;
  const suggestion = 'Ask for less: narrow the query, or request fewer items or a smaller page.';
  const code = CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE;
  // Changed in place: the pipeline knows the proxy's refusal by its object.
  result.content = toolError({ code, message, suggestion }).content;
  result._meta = { ...result._meta, [MetaKey.ERROR]: { ...meta, code, message, readLimitBytes: cap, limitBytes } };
  return result;
}
