import type { AuditAnchor, AuditHead, AuditPage, AuditRecords, StoredAuditEntry } from './types.js';

/** The hash a chain's first entry names as `prev`, and the head's before any entry. */
export const AUDIT_GENESIS = '0'.repeat(64);

/** The audit chain in this process: entries oldest first, the anchor and the head. */
export class MemoryAudit implements AuditRecords {
  private readonly entries: Array<StoredAuditEntry & { readonly hash: string }> = [];
  private anchor: AuditAnchor = { seq: 1, prev: AUDIT_GENESIS };
  private last: AuditHead = { seq: 0, hash: AUDIT_GENESIS };

  head(): Promise<AuditHead> {
    return Promise.resolve(this.last);
  }

  append(
    entry: StoredAuditEntry & { readonly hash: string },
    expected: AuditHead,
    maxEntries: number,
  ): Promise<{ appended: boolean; head: AuditHead }> {
    if (expected.seq !== this.last.seq || expected.hash !== this.last.hash)
      return Promise.resolve({ appended: false, head: this.last });
    this.entries.push({ seq: entry.seq, text: entry.text, hash: entry.hash });
    this.last = { seq: entry.seq, hash: entry.hash };
    const excess = this.entries.length - maxEntries;
    if (excess > 0) {
      const gone = this.entries.splice(0, excess);
      const newest = gone[gone.length - 1] as { seq: number; hash: string };
      this.anchor = { seq: newest.seq + 1, prev: newest.hash };
    }
    return Promise.resolve({ appended: true, head: this.last });
  }

  read(after: number, limit: number): Promise<AuditPage> {
    const from = this.firstAbove(after);
    const entries = this.entries.slice(from, from + limit).map(({ seq, text }) => ({ seq, text }));
    return Promise.resolve({ anchor: this.anchor, head: this.last, entries });
  }

  /** The index of the first entry numbered above `after` (entries are in order: a binary search). */
  private firstAbove(after: number): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.entries[middle] as StoredAuditEntry).seq <= after) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
