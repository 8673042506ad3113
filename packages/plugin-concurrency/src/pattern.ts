import { compileGlobs, isGlob, matchGlob } from '@sluice/core';
import type { GlobMatcher } from '@sluice/core';

/**
 * Tool-name patterns in the options, matched with the core's globs: `*`
 * stands for any run of characters (including none), `?` for exactly one,
 * every other character for itself.
 */

/** A tool name, or a pattern of tool-name characters with `*` and `?`. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.\-*?]{1,128}$/;

/**
 * Values keyed by tool name or pattern. An exact name wins over patterns;
 * among patterns the first one listed wins. Looked up once per tool, at
 * registration, never per call.
 */
export class PatternTable<T> {
  private readonly exact = new Map<string, T>();
  private readonly patterns: { pattern: string; value: T }[] = [];

  constructor(entries: Iterable<readonly [string, T]>) {
    for (const [pattern, value] of entries) {
      if (isGlob(pattern)) this.patterns.push({ pattern, value });
      else if (!this.exact.has(pattern)) this.exact.set(pattern, value);
    }
  }

  lookup(name: string): T | undefined {
    if (this.exact.has(name)) return this.exact.get(name);
    return this.patterns.find((p) => matchGlob(p.pattern, name))?.value;
  }
}

/** A set of tool names and patterns. */
export class PatternSet {
  private readonly matches: GlobMatcher;

  constructor(patterns: readonly string[]) {
    this.matches = compileGlobs(patterns);
  }

  has(name: string): boolean {
    return this.matches(name);
  }
}
