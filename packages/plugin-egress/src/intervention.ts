import { MetaKey, refusal } from '@sluice/core';
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
      `The result of tool "${tool}" is ${formatBytes(record.originalBytes)}, over its ${formatBytes(record.limitBytes)} limit, ` +
      'and its structured output cannot be cut without breaking its output schema.',
    suggestion: 'Use pagination (limit/offset) or filters to retrieve smaller result sets.',
    details: { originalBytes: record.originalBytes, limitBytes: record.limitBytes },
  });
  return { ...result, _meta: { ...result._meta, [MetaKey.EGRESS]: record } };
}
