import { createHash } from 'node:crypto';
import type { AuditAnchor, AuditHead, AuditPage } from '@sluice/core';

/** An audit entry's fields: flat, strings and numbers only, so that its canonical form is its sorted keys. */
export type AuditFields = Readonly<Record<string, string | number>>;

/**
 * The hash of an entry: SHA-256 (hex) over its fields but `hash`, as JSON
 * with the keys sorted. `prev` is one of the fields, so each hash covers
 * the whole chain before it.
 */
export function auditHash(fields: AuditFields): string {
  const sorted = Object.keys(fields)
    .filter((key) => key !== 'hash')
    .sort();
  const canonical = JSON.stringify(Object.fromEntries(sorted.map((key) => [key, fields[key]])));
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** How an entry was found wrong. */
export type AuditProblemKind = 'modified' | 'missing' | 'reordered' | 'unreadable';

export interface AuditProblem {
  readonly kind: AuditProblemKind;
  /** The entry's number (the first of a run of missing ones). */
  readonly seq: number;
  readonly message: string;
}

/** What `verify` found: `ok` when the kept chain is whole, from the anchor to the head. */
export interface AuditVerification {
  readonly ok: boolean;
  /** Entries checked. */
  readonly entries: number;
  readonly anchor: AuditAnchor;
  readonly head: AuditHead;
  /** At most `MAX_PROBLEMS`, in the order found. */
  readonly problems: readonly AuditProblem[];
}

/** Problems listed at most: past a few hundred, the chain is wrong enough to look at by hand. */
export const MAX_PROBLEMS = 200;

/**
 * Checks the chain page by page, as read from the oldest entry on. Each
 * entry must hash to its `hash`, carry the number after the one before and
 * name that one's hash as `prev`; the first kept entry must match the
 * anchor and the newest the head. Retention moving the anchor while pages
 * are read is not a problem: the check resumes from the new anchor.
 */
export class AuditChainCheck {
  private readonly problems: AuditProblem[] = [];
  private entries = 0;
  private next: number | undefined;
  /** The hash the next entry must name; undefined after an unreadable entry. */
  private prev: string | undefined;
  /** Numbers skipped over, which a later (out-of-order) entry may still fill. */
  private readonly gaps: Array<[number, number]> = [];
  private anchor: AuditAnchor | undefined;

  /** Feeds the next page (read with `after` the last number seen). */
  page(page: AuditPage): void {
    if (this.next === undefined || page.anchor.seq > this.next) {
      // The start, or retention trimmed past where the check had got to: resume at the anchor.
      this.next = page.anchor.seq;
      this.prev = page.anchor.prev;
      this.dropGapsBelow(page.anchor.seq);
    }
    this.anchor = page.anchor;
    for (const stored of page.entries) this.entry(stored.seq, stored.text);
  }

  /** The verdict, given the head read with the last (short) page. */
  finish(head: AuditHead): AuditVerification {
    const next = this.next ?? 1;
    if (head.seq >= next) this.gap(next, head.seq);
    else if (head.seq === next - 1 && this.prev !== undefined && head.seq > 0 && head.hash !== this.prev)
      this.problem('modified', head.seq, `entry ${head.seq} is not the one the head names: it was rewritten`);
    for (const [from, to] of this.gaps)
      this.problem(
        'missing',
        from,
        from === to ? `entry ${from} is missing: it was deleted` : `entries ${from}-${to} are missing: deleted`,
      );
    const anchor = this.anchor ?? { seq: 1, prev: '' };
    return { ok: this.problems.length === 0, entries: this.entries, anchor, head, problems: this.problems };
  }

  private entry(seq: number, text: string): void {
    this.entries++;
    const next = this.next ?? seq;
    const fields = parse(text);
    if (fields === undefined) {
      this.problem('unreadable', seq, `entry ${seq} is not an audit entry: it was overwritten`);
      this.advance(seq, next, undefined);
      return;
    }
    const own = typeof fields.seq === 'number' ? fields.seq : seq;
    if (fields.hash !== auditHash(fields))
      this.problem('modified', own, `entry ${own} does not match its hash: it was modified`);
    if (own !== seq) this.problem('reordered', own, `entry ${own} is stored as number ${seq}: it was moved`);
    if (own < next) {
      if (this.fill(own)) this.problem('reordered', own, `entry ${own} comes after a later one: it was moved`);
      else this.problem('reordered', own, `entry ${own} appears twice or out of order`);
      return;
    }
    if (own === next && this.prev !== undefined && fields.prev !== this.prev)
      this.problem('modified', own, `entry ${own} does not follow entry ${own - 1}: one of them was rewritten`);
    this.advance(own, next, typeof fields.hash === 'string' ? fields.hash : undefined);
  }

  private advance(seq: number, next: number, hash: string | undefined): void {
    if (seq > next) this.gaps.push([next, seq - 1]);
    this.next = Math.max(next, seq + 1);
    this.prev = hash;
  }

  private gap(from: number, to: number): void {
    this.gaps.push([from, to]);
  }

  /** Takes `seq` out of the gaps it falls in: true if it was one. */
  private fill(seq: number): boolean {
    const index = this.gaps.findIndex(([from, to]) => seq >= from && seq <= to);
    if (index < 0) return false;
    const [from, to] = this.gaps[index] as [number, number];
    const rest: Array<[number, number]> = [];
    if (from < seq) rest.push([from, seq - 1]);
    if (seq < to) rest.push([seq + 1, to]);
    this.gaps.splice(index, 1, ...rest);
    return true;
  }

  private dropGapsBelow(seq: number): void {
    for (let i = this.gaps.length - 1; i >= 0; i--) {
      const gap = this.gaps[i] as [number, number];
      if (gap[1] < seq) this.gaps.splice(i, 1);
      else if (gap[0] < seq) gap[0] = seq;
    }
  }

  private problem(kind: AuditProblemKind, seq: number, message: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ kind, seq, message });
  }
}

function parse(text: string): (Record<string, unknown> & AuditFields) | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  for (const field of Object.values(value))
    if (typeof field !== 'string' && typeof field !== 'number') return undefined;
  return value as AuditFields;
}
