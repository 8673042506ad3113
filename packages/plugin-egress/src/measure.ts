import type { CallToolResult } from '@sluice/core';
import type { MemberSize } from './json-size.js';
import { arraySize, jsonSizeBound, objectSize, resolvedSize } from './json-size.js';
import { byteLength } from './utf8.js';

/**
 * The size of a tool result, as this plugin limits it: the UTF-8 bytes of
 * the result's JSON, except that the payload strings the model reads (the
 * `text` of a text block, the base64 `data` of an image or audio block, the
 * `text` or `blob` of an embedded resource) count as their own UTF-8 bytes,
 * unescaped. Everything else (structuredContent, `_meta`, resource links,
 * annotations, any other field) counts as the JSON it is sent as.
 *
 * Equivalently: `Buffer.byteLength(JSON.stringify(result))` with every
 * payload string replaced by `""`, plus the UTF-8 bytes of those strings.
 *
 * A text counts once when the result carries it twice: a text block whose
 * text is also a top-level string of structuredContent (a file's text, as a
 * file server with an output schema returns it) counts as its two quotes,
 * the text itself being counted in structuredContent. Texts shorter than
 * {@link TWIN_MIN_LENGTH} count twice: too short to matter.
 *
 * Past `room`, counting stops and the count returned is above `room`.
 */
export function resultSize(result: CallToolResult, room = Number.POSITIVE_INFINITY): number {
  const twins = twinsOf(result);
  if (twins === undefined) return objectSize(result, room, 1, resultMember);
  const item: MemberSize = (_index, block, itemRoom, depth) => blockSize(block, itemRoom, depth, twins);
  const member: MemberSize = (key, value, memberRoom, depth) =>
    key === 'content' && Array.isArray(value)
      ? arraySize(value, memberRoom, depth + 1, item)
      : resolvedSize(value, memberRoom, depth);
  return objectSize(result, room, 1, member);
}

/** A text shorter than this (in UTF-16 units) counts twice even where structuredContent repeats it. */
export const TWIN_MIN_LENGTH = 1_024;

/** The long top-level strings of a result's structuredContent, which a text block may repeat; undefined if none. */
function twinsOf(result: CallToolResult): ReadonlySet<string> | undefined {
  const structured: unknown = result.structuredContent;
  if (typeof structured !== 'object' || structured === null || Array.isArray(structured)) return undefined;
  let twins: Set<string> | undefined;
  for (const value of Object.values(structured as Record<string, unknown>))
    if (typeof value === 'string' && value.length >= TWIN_MIN_LENGTH) (twins ??= new Set()).add(value);
  return twins;
}

/**
 * Whether a result is within `limitBytes`. A result well under the limit is
 * cleared by a bound on its size, without counting a byte; one closer to the
 * limit is counted exactly, and counting stops as soon as it is over.
 */
export function fitsWithin(result: CallToolResult, limitBytes: number): boolean {
  return jsonSizeBound(result, limitBytes) <= limitBytes || resultSize(result, limitBytes) <= limitBytes;
}

/**
 * The size of an over-limit result, for the record. Each part (each content
 * block, structuredContent, `_meta`, any other field) is counted until it
 * passes `limitBytes`, no further: a 30 MB string is not walked to learn it
 * is 30 MB rather than 29. The count is exact when no single part is over
 * the limit, and a lower bound otherwise (an over-long string counts as its
 * length in UTF-16 code units, which its UTF-8 size never falls below). A
 * text the result carries twice counts once, as in {@link resultSize}.
 */
export function originalSize(result: CallToolResult, limitBytes: number): number {
  const twins = twinsOf(result);
  const block: MemberSize = (_index, value, _room, depth) => blockSize(value, limitBytes, depth, twins);
  const member: MemberSize = (key, value, _room, depth) =>
    key === 'content' && Array.isArray(value)
      ? arraySize(value, Number.POSITIVE_INFINITY, depth + 1, block)
      : resolvedSize(value, limitBytes, depth);
  return objectSize(result, Number.POSITIVE_INFINITY, 1, member);
}

/** The size of one content block, counted the same way; a text in `twins` counts as its quotes. */
export function blockSize(
  block: unknown,
  room = Number.POSITIVE_INFINITY,
  depth = 2,
  twins?: ReadonlySet<string>,
): number {
  if (typeof block !== 'object' || block === null || Array.isArray(block)) return resolvedSize(block, room, depth);
  const type = (block as { type?: unknown }).type;
  const member = twins !== undefined && type === 'text' ? twinTextMember(twins) : memberSizeFor(type);
  return objectSize(block as Record<string, unknown>, room, depth + 1, member);
}

/** A text block's members, its text counted as two quotes when structuredContent already carries it. */
const twinTextMember =
  (twins: ReadonlySet<string>): MemberSize =>
  (key, value, room, depth) =>
    key === 'text' && typeof value === 'string' && twins.has(value) ? 2 : textMember(key, value, room, depth);

/** A payload string: its UTF-8 bytes, plus the two quotes around it. */
const raw = (value: unknown, room: number, depth: number): number =>
  typeof value === 'string' ? byteLength(value, room) + 2 : resolvedSize(value, room, depth);

const plainMember: MemberSize = (_key, value, room, depth) => resolvedSize(value, room, depth);

const textMember: MemberSize = (key, value, room, depth) =>
  key === 'text' ? raw(value, room, depth) : resolvedSize(value, room, depth);

const dataMember: MemberSize = (key, value, room, depth) =>
  key === 'data' ? raw(value, room, depth) : resolvedSize(value, room, depth);

const resourceContentsMember: MemberSize = (key, value, room, depth) =>
  key === 'text' || key === 'blob' ? raw(value, room, depth) : resolvedSize(value, room, depth);

const resourceMember: MemberSize = (key, value, room, depth) =>
  key === 'resource' && typeof value === 'object' && value !== null && !Array.isArray(value)
    ? objectSize(value as Record<string, unknown>, room, depth + 1, resourceContentsMember)
    : resolvedSize(value, room, depth);

function memberSizeFor(type: unknown): MemberSize {
  switch (type) {
    case 'text':
      return textMember;
    case 'image':
    case 'audio':
      return dataMember;
    case 'resource':
      return resourceMember;
    default:
      return plainMember;
  }
}

const contentItem: MemberSize = (_index, block, room, depth) => blockSize(block, room, depth);

const resultMember: MemberSize = (key, value, room, depth) =>
  key === 'content' && Array.isArray(value)
    ? arraySize(value, room, depth + 1, contentItem)
    : resolvedSize(value, room, depth);
