import type { ServerResponse } from 'node:http';
import { MAX_AUDIT_PAGE } from '@sluice/audit';
import type { Audit } from '@sluice/core';
import { HttpProblem } from './http-io.js';

/** Entries per page when the request does not say. */
export const DEFAULT_AUDIT_PAGE = 1000;

/** The headers of an audit page: where the kept chain starts, its newest entry, and the next page's `after`. */
export const AuditHeader = Object.freeze({
  ANCHOR: 'sluice-audit-anchor',
  HEAD: 'sluice-audit-head',
  NEXT: 'sluice-audit-next',
} as const);

/**
 * `GET /admin/v1/audit?after=<seq>&limit=<n>`: the entries numbered above
 * `after` (default 0), oldest first, as JSON Lines, exactly as stored. The
 * page, anchor and head are read at once; `sluice-audit-anchor` is
 * `<seq> <prev>`, `sluice-audit-head` is `<seq> <hash>`, and
 * `sluice-audit-next` (present when the page is full) is the next `after`.
 */
export async function sendAuditPage(res: ServerResponse, audit: Audit, params: URLSearchParams): Promise<void> {
  const after = whole(params.get('after'), 'after', 0, Number.MAX_SAFE_INTEGER, 0);
  const limit = whole(params.get('limit'), 'limit', 1, MAX_AUDIT_PAGE, DEFAULT_AUDIT_PAGE);
  const page = await audit.read(after, limit);
  const last = page.entries[page.entries.length - 1];
  res.writeHead(200, {
    'content-type': 'application/jsonl; charset=utf-8',
    'cache-control': 'no-store',
    [AuditHeader.ANCHOR]: `${page.anchor.seq} ${page.anchor.prev}`,
    [AuditHeader.HEAD]: `${page.head.seq} ${page.head.hash}`,
    ...(page.entries.length === limit && last !== undefined ? { [AuditHeader.NEXT]: String(last.seq) } : {}),
  });
  // A line is one entry: text someone put in the store with a line break in it is sent as a JSON string instead.
  res.end(
    page.entries.map((entry) => `${/[\r\n]/.test(entry.text) ? JSON.stringify(entry.text) : entry.text}\n`).join(''),
  );
}

function whole(text: string | null, name: string, min: number, max: number, fallback: number): number {
  if (text === null) return fallback;
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new HttpProblem(400, `"${name}" must be a whole number from ${min} to ${max}`);
  return value;
}
