/** Shorter values would blank out ordinary words. */
const MIN_LENGTH = 4;
const MAX_VALUES = 10_000;

/**
 * Values masked as `[redacted]` out of every line core logs with text that
 * came from an upstream (failed calls, stderr, transport errors), beside
 * each connection's own header and environment values. Plugins that know
 * further secrets (tokens an upstream may quote) add them here. Empty, it
 * costs nothing.
 */
export class Redactions {
  private values: readonly string[] = [];

  /** Adds values to mask; shorter than 4 characters are ignored. */
  add(values: Iterable<string>): void {
    const all = new Set(this.values);
    for (const value of values) if (value.length >= MIN_LENGTH && all.size < MAX_VALUES) all.add(value);
    // Longest first, so that a value containing another is masked whole.
    this.values = [...all].sort((a, b) => b.length - a.length);
  }

  mask(text: string): string {
    let out = text;
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join('[redacted]');
    return out;
  }
}
