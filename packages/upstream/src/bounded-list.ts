import type { Client, ResultTypeMap } from '@modelcontextprotocol/client';

/**
 * Pages of one upstream list (tools, resources, templates, prompts) read at
 * most: an upstream whose cursor never ends is read this far, and the rest
 * is reported as left out.
 */
export const MAX_LIST_PAGES = 1_000;

/**
 * JSON bytes of one upstream list's pages read at most. A page may be as
 * large as one message (10 MiB by default) and every item read is kept until
 * the next listing, so the count of items alone does not bound the memory a
 * hostile upstream's list takes.
 */
export const MAX_LIST_BYTES = 16 * 1024 * 1024;

/**
 * Characters kept of each listed item's `description` and `title`: as long
 * as the description an operator may give a tool in the risk plugin's rules.
 */
export const MAX_ITEM_TEXT_CHARS = 10_000;

/** Why a list was not read to its end: the bound it reached. */
export type ListCut =
  | { readonly by: 'items'; readonly max: number }
  | { readonly by: 'bytes'; readonly max: number }
  | { readonly by: 'pages'; readonly max: number };

export interface BoundedList<T> {
  readonly items: T[];
  /** Set when the rest of the list was left out. */
  readonly cut?: ListCut;
  /** Items whose `description` or `title` was cut at `MAX_ITEM_TEXT_CHARS`. */
  readonly shortened: number;
}

/** What of one list was left out or shortened, to report: `list` names it in the plural ("resources"). */
export interface ListReport {
  readonly list: string;
  readonly kept: number;
  readonly cut?: ListCut;
  readonly shortened: number;
}

/** The report of a list that lost something, or undefined when it was read whole. */
export function reportOf(list: string, read: BoundedList<unknown>): ListReport | undefined {
  if (read.cut === undefined && read.shortened === 0) return undefined;
  return { list, kept: read.items.length, shortened: read.shortened, ...(read.cut ? { cut: read.cut } : {}) };
}

/** The list requests of an upstream, all paginated. */
export type ListMethod = 'tools/list' | 'resources/list' | 'resources/templates/list' | 'prompts/list';

/** Reads one list of an upstream (named `list` in reports) within the bounds; see `listReader`. */
export type ListReader = <M extends ListMethod, T extends object>(
  list: string,
  method: M,
  itemsOf: (page: ResultTypeMap[M]) => readonly T[],
) => Promise<T[]>;

/**
 * Reads an upstream's lists page by page (not the SDK's walk of every page,
 * which keeps them all before anything can bound them), each request within
 * `timeout`, at most `maxItems` items a list; what a list leaves out goes to
 * `report`.
 */
export function listReader(
  client: Client,
  options: { readonly timeout: number; readonly maxItems: number },
  report: (what: ListReport) => void,
): ListReader {
  return async (list, method, itemsOf) => {
    const fetchPage = (cursor: string | undefined) =>
      client.request({ method, ...(cursor === undefined ? {} : { params: { cursor } }) }, { timeout: options.timeout });
    const read = await readList(fetchPage, itemsOf, options.maxItems);
    const lost = reportOf(list, read);
    if (lost) report(lost);
    return read.items;
  };
}

/** One page of a list as the upstream answered it. */
export interface ListPage {
  readonly nextCursor?: string | undefined;
}

/**
 * Reads a list page by page, stopping at `maxItems` items, `MAX_LIST_BYTES`
 * of page JSON and `MAX_LIST_PAGES` pages. A page that takes the bytes over
 * the bound is not kept. `fetchPage` gets the cursor to send (none first).
 */
export async function readList<P extends ListPage, T extends object>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  itemsOf: (page: P) => readonly T[],
  maxItems: number,
): Promise<BoundedList<T>> {
  const items: T[] = [];
  let shortened = 0;
  let bytes = 0;
  let cursor: string | undefined;
  const ended = (cut?: ListCut): BoundedList<T> => (cut ? { items, cut, shortened } : { items, shortened });
  for (let pages = 0; ; pages++) {
    if (pages === MAX_LIST_PAGES) return ended({ by: 'pages', max: MAX_LIST_PAGES });
    const page = await fetchPage(cursor);
    bytes += jsonBytes(page);
    if (bytes > MAX_LIST_BYTES) return ended({ by: 'bytes', max: MAX_LIST_BYTES });
    for (const item of itemsOf(page)) {
      if (items.length === maxItems) return ended({ by: 'items', max: maxItems });
      const kept = shortenTexts(item);
      if (kept !== item) shortened++;
      items.push(kept);
    }
    const next = page.nextCursor;
    // The same cursor again would fetch the same page again: the list ends here, as the SDK's own walk ends it.
    if (next === undefined || next === cursor) return ended();
    if (items.length === maxItems) return ended({ by: 'items', max: maxItems });
    cursor = next;
  }
}

/** Why a list was left incomplete, for `skipped` and the log. */
export function cutReason(upstream: string, list: string, cut: ListCut, kept: number): string {
  const bound =
    cut.by === 'items'
      ? `more than ${cut.max} ${list}`
      : cut.by === 'bytes'
        ? `${list} over ${cut.max} bytes of JSON`
        : `${list} over more than ${cut.max} pages`;
  return `Upstream "${upstream}" lists ${bound}; the first ${kept} are kept and the rest are left out`;
}

/**
 * The UTF-8 bytes of a value an upstream sent, as JSON (a page, a request's
 * params, a log message's); one that is no JSON (an in-process upstream's
 * cycle or bigint) is over any bound.
 */
export function jsonBytes(value: unknown): number {
  if (value === undefined) return 0; // absent params: nothing to hold
  try {
    return Buffer.byteLength(JSON.stringify(value));
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** The item, or a copy whose over-long `description` and `title` are cut. */
function shortenTexts<T extends object>(item: T): T {
  const fields = item as Record<string, unknown>;
  const long = (key: string) => typeof fields[key] === 'string' && fields[key].length > MAX_ITEM_TEXT_CHARS;
  if (!long('description') && !long('title')) return item;
  const copy: Record<string, unknown> = { ...fields };
  for (const key of ['description', 'title'])
    if (long(key)) copy[key] = cutText(fields[key] as string, MAX_ITEM_TEXT_CHARS);
  return copy as T;
}

/** `text` cut to `max` characters with an ellipsis, never between the two halves of a surrogate pair. */
function cutText(text: string, max: number): string {
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
