import { ProtocolError } from '@modelcontextprotocol/server';
import { RpcCode } from '@sluice/core';

/** Items per page of the gateway's own `resources/list`, `resources/templates/list` and `prompts/list`. */
export const PAGE_SIZE = 500;
/** A cursor longer than this is refused unread: it is client input. */
const MAX_CURSOR_LENGTH = 64;

export interface Page<T> {
  readonly items: T[];
  readonly nextCursor?: string;
}

/**
 * One page of a merged list. The cursor is opaque to clients: the list it
 * belongs to and an offset, so that a cursor of one list is refused by
 * another, and a client paging to the end sees each item once while the
 * list does not change.
 */
export function pageOf<T>(list: 'resources' | 'templates' | 'prompts', all: readonly T[], cursor: unknown): Page<T> {
  const offset = cursor === undefined ? 0 : offsetOf(list, cursor);
  const end = offset + PAGE_SIZE;
  const items = all.slice(offset, end);
  return end < all.length ? { items, nextCursor: cursorOf(list, end) } : { items };
}

function cursorOf(list: string, offset: number): string {
  return Buffer.from(`${list}:${offset}`, 'utf8').toString('base64url');
}

function offsetOf(list: string, cursor: unknown): number {
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH) throw invalidCursor();
  const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^([a-z]+):(\d{1,9})$/.exec(decoded);
  if (match?.[1] !== list) throw invalidCursor();
  return Number(match[2]);
}

function invalidCursor(): ProtocolError {
  return new ProtocolError(
    RpcCode.INVALID_PARAMS,
    'Invalid cursor: pass the nextCursor of a previous page of this list',
  );
}
