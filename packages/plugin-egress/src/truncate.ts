import { MetaKey } from '@sluice/core';
import type { CallToolResult, ContentBlock } from '@sluice/core';
import { Budget } from './budget.js';
import { cutBlock, isRecord, sanitized } from './cut-block.js';
import type { EgressRecord } from './intervention.js';
import { interventionText } from './intervention.js';
import { jsonSize, jsonStringSize, jsonValueOf } from './json-size.js';
import { blockSize, resultSize } from './measure.js';

/** What a truncated result keeps, and the size of that, before the intervention message and record. */
export interface Truncation {
  readonly result: CallToolResult;
  readonly keptBytes: number;
}

/**
 * `_meta` keys that steer what happens next (chaining's `nextTool`, errors,
 * the loop guard, protocol keys): kept ahead of the content when they fit.
 */
const STEERING_KEYS = new Set(['nextTool', 'openai/nextTool', 'callStack']);
const STEERING_PREFIXES = ['dev.sluice/', 'io.modelcontextprotocol/'];
const isSteering = (key: string): boolean => STEERING_KEYS.has(key) || STEERING_PREFIXES.some((p) => key.startsWith(p));

/** Keys of a result handled one by one; any other key is kept after them if it fits. */
const KNOWN_KEYS = new Set(['content', 'structuredContent', 'isError', '_meta']);

const SKELETON = resultSize({ content: [], _meta: {} });

/**
 * Cuts a result so that all of it, intervention message and record included,
 * fits in `limitBytes`. In order, while room lasts: `isError`; the steering
 * `_meta` keys; structuredContent if `keepStructured` (else `undefined` is
 * returned when it does not fit whole); the content blocks, as a prefix (the
 * first block that does not fit is cut if it is text, and nothing after it
 * is kept); structuredContent otherwise, whole or not at all; the other
 * `_meta` keys; any other field.
 */
export function truncateResult(
  result: CallToolResult,
  limitBytes: number,
  originalBytes: number,
  keepStructured: boolean,
): Truncation | undefined {
  const notice: ContentBlock = { type: 'text', text: interventionText(limitBytes) };
  const reserve =
    SKELETON + blockSize(notice) + 1 + recordSize({ originalBytes, keptBytes: limitBytes, limitBytes }) + 1;
  const budget = new Budget(limitBytes - reserve);
  const fields = result as Record<string, unknown>;
  const meta = metaOf(result);
  const kept: Record<string, unknown> = {};
  const keptMeta: Record<string, unknown> = {};

  budget.keep('result', kept, 'isError', fields.isError);
  for (const key of Object.keys(meta))
    if (isSteering(key) && key !== MetaKey.EGRESS) budget.keep('meta', keptMeta, key, meta[key]);
  if (keepStructured && jsonValueOf(fields.structuredContent, 'structuredContent') !== undefined) {
    if (!budget.keep('result', kept, 'structuredContent', fields.structuredContent)) return undefined;
  }
  const content = keepContent(Array.isArray(result.content) ? result.content : [], budget);
  if (!keepStructured) budget.keep('result', kept, 'structuredContent', fields.structuredContent);
  for (const key of Object.keys(meta)) if (!isSteering(key)) budget.keep('meta', keptMeta, key, meta[key]);
  for (const key of Object.keys(fields)) if (!KNOWN_KEYS.has(key)) budget.keep('result', kept, key, fields[key]);

  const keptBytes = budget.keptBytes();
  const record: EgressRecord = { originalBytes, keptBytes, limitBytes };
  return {
    result: {
      content: [...content, notice],
      ...kept,
      _meta: { ...keptMeta, [MetaKey.EGRESS]: record },
    },
    keptBytes,
  };
}

function metaOf(result: CallToolResult): Record<string, unknown> {
  const meta: unknown = result._meta;
  return isRecord(meta) ? meta : {};
}

function recordSize(record: EgressRecord): number {
  return jsonStringSize(MetaKey.EGRESS) + 1 + jsonSize(record);
}

/** The blocks that fit, in order; the first that does not is cut if it holds text, and the rest dropped. */
function keepContent(blocks: readonly ContentBlock[], budget: Budget): ContentBlock[] {
  const kept: ContentBlock[] = [];
  for (const block of blocks) {
    if (budget.take('content', blockSize(block, budget.room - 1))) {
      kept.push(sanitized(block));
      continue;
    }
    const cut = cutBlock(block, budget.room - 1);
    if (cut !== undefined && budget.take('content', cut.bytes)) kept.push(cut.block);
    break;
  }
  return kept;
}
