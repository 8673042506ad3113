import { jsonSize, jsonStringSize, jsonValueOf } from './json-size.js';

/** Where a kept member goes: the result itself, its content array, or its `_meta`. */
export type Place = 'result' | 'content' | 'meta';

/**
 * Room left in the limit, taken one JSON member at a time, each with a comma
 * (one too many per container: the slack is the budget's, never the limit's).
 * It also tallies the exact size of what it let in.
 */
export class Budget {
  private readonly sums: Record<Place, number> = { result: 0, content: 0, meta: 0 };
  private readonly counts: Record<Place, number> = { result: 0, content: 0, meta: 0 };

  constructor(public room: number) {}

  /** Takes `bytes` plus a comma if they fit. */
  take(place: Place, bytes: number): boolean {
    if (bytes + 1 > this.room) return false;
    this.room -= bytes + 1;
    this.sums[place] += bytes;
    this.counts[place]++;
    return true;
  }

  /** Copies `key` into `into` if JSON writes it and the member `"key":value` fits. */
  keep(place: 'result' | 'meta', into: Record<string, unknown>, key: string, value: unknown): boolean {
    if (key === '__proto__' || jsonValueOf(value, key) === undefined) return false;
    const keyBytes = jsonStringSize(key) + 1;
    if (!this.take(place, keyBytes + jsonSize(value, this.room - keyBytes))) return false;
    into[key] = value;
    return true;
  }

  /** The exact size of `{"content":[...],...result members,"_meta":{...}}` as taken. */
  keptBytes(): number {
    const commas = (place: Place) => Math.max(0, this.counts[place] - 1);
    const content = CONTENT_KEY + 2 + this.sums.content + commas('content');
    const members = this.sums.result + this.counts.result; // each after "content", with its comma
    const meta = this.counts.meta === 0 ? 0 : 1 + META_KEY + 2 + this.sums.meta + commas('meta');
    return 2 + content + members + meta;
  }
}

const CONTENT_KEY = jsonStringSize('content') + 1;
const META_KEY = jsonStringSize('_meta') + 1;
