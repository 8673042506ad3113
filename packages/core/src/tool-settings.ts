import type { SelectorOptions, ToolSubject } from './tool-selector.js';
import { isExactSelector, parseToolSelector, selects } from './tool-selector.js';
import type { ParsedToolSelector } from './tool-selector.js';

/** Settings keyed by tool selector, in the order written. */
export type ToolSettingsEntries<T> = Readonly<Record<string, T>> | Iterable<readonly [string, T]>;

function entriesOf<T>(entries: ToolSettingsEntries<T>): Iterable<readonly [string, T]> {
  return Symbol.iterator in entries ? entries : Object.entries(entries);
}

function foldKey(name: string, ignoreCase: boolean): string {
  return ignoreCase ? name.replace(/[A-Z]/g, (c) => c.toLowerCase()) : name;
}

/**
 * One per-tool setting, looked up the way every plugin does it: the tool's
 * own policy first, then an entry keyed by its exact name, then the first
 * entry (in the order written) whose selector selects it, then the default.
 * Build it once from the options; look tools up at registration, not per call.
 */
export class ToolSettings<T> {
  private readonly exact = new Map<string, T>();
  private readonly patterns: { readonly selector: ParsedToolSelector; readonly value: T }[] = [];
  private readonly ignoreCase: boolean;

  /** Throws `INVALID_OPTIONS` for a malformed selector. */
  constructor(entries: ToolSettingsEntries<T> = [], options: SelectorOptions = {}) {
    this.ignoreCase = options.ignoreCase === true;
    for (const [text, value] of entriesOf(entries)) {
      const selector = parseToolSelector(text);
      if (!isExactSelector(selector)) this.patterns.push({ selector, value });
      else {
        const key = foldKey(selector.glob, this.ignoreCase);
        if (!this.exact.has(key)) this.exact.set(key, value);
      }
    }
  }

  /** The entry for the subject: by exact name, else the first selector that selects it. */
  lookup(subject: string | ToolSubject): T | undefined {
    const name = typeof subject === 'string' ? subject : subject.name;
    const key = foldKey(name, this.ignoreCase);
    if (this.exact.has(key)) return this.exact.get(key);
    const options = { ignoreCase: this.ignoreCase };
    return this.patterns.find((p) => selects(p.selector, subject, options))?.value;
  }

  /** `own` if defined, else the entry for the subject, else `fallback`. */
  resolve(subject: string | ToolSubject, own: T | undefined, fallback?: T): T | undefined {
    return own ?? this.lookup(subject) ?? fallback;
  }
}
