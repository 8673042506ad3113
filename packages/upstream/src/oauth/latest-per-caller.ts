/**
 * The latest things a replica handed each caller (consent links, started
 * sign-ins), for a bounded number of callers: past `perCaller` a caller's
 * oldest falls out; past `callers`, the caller that added least recently
 * falls out with all of its own. What falls out is handed back, for the
 * owner to spend (delete from the store), so that a caller forgotten here
 * never holds its old things beside new ones.
 */
export class LatestPerCaller<T> {
  /** Each caller's things, oldest first; the map's order is the callers', the one idle longest first. */
  private readonly held = new Map<string, T[]>();

  constructor(
    private readonly perCaller: number,
    private readonly callers: number,
  ) {}

  /** Keeps `item` as the newest of `who`'s; returns what no longer fits, to be spent. */
  add(who: string, item: T): T[] {
    const items = this.held.get(who) ?? [];
    this.held.delete(who);
    this.held.set(who, items);
    items.push(item);
    const out = items.length > this.perCaller ? items.splice(0, items.length - this.perCaller) : [];
    if (this.held.size > this.callers) {
      const [idle, theirs] = this.held.entries().next().value as [string, T[]];
      this.held.delete(idle);
      out.push(...theirs);
    }
    return out;
  }

  clear(): void {
    this.held.clear();
  }
}
