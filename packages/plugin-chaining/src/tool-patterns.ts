import { z } from 'zod';

/**
 * A tool-name glob: `*` matches any run of characters, `?` one character; a
 * leading `!` excludes. Examples: `crm.*`, `!*.delete_*`.
 */
export const ToolPatternSchema = z
  .string()
  .regex(
    /^!?[A-Za-z0-9_.*?-]{1,128}$/,
    'must be a tool-name glob: letters, digits, "_", "-", ".", "*" or "?", optionally after one "!"',
  );

export type ToolMatcher = (name: string) => boolean;

function toRegExp(glob: string): RegExp {
  const body = glob.replace(/[.*?-]/g, (c) => (c === '*' ? '.*' : c === '?' ? '.' : `\\${c}`));
  return new RegExp(`^${body}$`);
}

/**
 * Compiles patterns once. A name is selected when some pattern matches it
 * and no `!pattern` does; a list of only `!patterns` selects every other name.
 */
export function toolMatcher(patterns: readonly string[]): ToolMatcher {
  const include = patterns.filter((p) => !p.startsWith('!')).map(toRegExp);
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => toRegExp(p.slice(1)));
  const includeAll = include.length === 0 && exclude.length > 0;
  return (name) => (includeAll || include.some((re) => re.test(name))) && !exclude.some((re) => re.test(name));
}
