import type { ContentBlock } from '@sluice/core';
import { clusterStart } from './graphemes.js';
import { blockSize } from './measure.js';
import { byteLength, utf8Cut, wellFormed } from './utf8.js';

/** A text block or a text resource cut to fit `room`, with its size; undefined when nothing of it fits or it cannot be cut. */
export function cutBlock(given: ContentBlock, room: number): { block: ContentBlock; bytes: number } | undefined {
  const block: unknown = given;
  if (!isRecord(block)) return undefined;
  if (block.type === 'text' && typeof block.text === 'string') {
    const empty = { ...block, text: '' };
    const overhead = blockSize(empty, room);
    const text = cutText(block.text, room - overhead);
    return text && { block: { ...empty, text: text.text } as ContentBlock, bytes: overhead + text.bytes };
  }
  const resource = block.resource;
  if (block.type === 'resource' && isRecord(resource) && typeof resource.text === 'string') {
    const empty = { ...block, resource: { ...resource, text: '' } };
    const overhead = blockSize(empty, room);
    const text = cutText(resource.text, room - overhead);
    return (
      text && {
        block: { ...block, resource: { ...resource, text: text.text } } as ContentBlock,
        bytes: overhead + text.bytes,
      }
    );
  }
  return undefined; // images, audio and blobs are useless cut: dropped whole
}

/** The longest prefix of whole grapheme clusters in `maxBytes`, well-formed, with its size; undefined if empty. */
function cutText(text: string, maxBytes: number): { text: string; bytes: number } | undefined {
  if (maxBytes <= 0) return undefined;
  const cut = utf8Cut(text, maxBytes);
  const end = clusterStart(text, cut.end);
  if (end === 0) return undefined;
  // Backing off to a cluster start gives up a few code units: subtract their bytes.
  const bytes = end === cut.end ? cut.bytes : cut.bytes - byteLength(text.slice(end, cut.end));
  return { text: wellFormed(text.slice(0, end)), bytes };
}

/** The block with lone surrogates in its payload replaced by U+FFFD (same size), or the block itself. */
export function sanitized(given: ContentBlock): ContentBlock {
  const block: unknown = given;
  if (!isRecord(block)) return given;
  if (block.type === 'text') return withWellFormed(block, 'text') as ContentBlock;
  if (block.type === 'image' || block.type === 'audio') return withWellFormed(block, 'data') as ContentBlock;
  const resource = block.resource;
  if (block.type !== 'resource' || !isRecord(resource)) return given;
  const clean = withWellFormed(withWellFormed(resource, 'text'), 'blob');
  return clean === resource ? given : ({ ...block, resource: clean } as ContentBlock);
}

function withWellFormed<T extends Record<string, unknown>>(object: T, key: string): T {
  const value = object[key];
  if (typeof value !== 'string') return object;
  const clean = wellFormed(value);
  return clean === value ? object : { ...object, [key]: clean };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
