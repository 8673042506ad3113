import { compileGlobs } from '@sluice/core';

/** Matches an upstream tool by the upstream's configured name and the tool's name at the upstream. */
export type ToolMatcher = (upstream: string, originalName: string) => boolean;

/**
 * Compiles a tool-name pattern once, at construction: `*` matches any run of
 * characters, `?` exactly one, as in core's import globs; `upstream/pattern`
 * matches only the tools of that upstream (tool names cannot contain `/`, so
 * the first `/` is unambiguous).
 */
export function compileToolPattern(pattern: string): ToolMatcher {
  const slash = pattern.indexOf('/');
  const upstream = slash === -1 ? undefined : pattern.slice(0, slash);
  const name = compileGlobs([slash === -1 ? pattern : pattern.slice(slash + 1)]);
  return (from, originalName) => (upstream === undefined || upstream === from) && name(originalName);
}
