/**
 * Tool-name glob patterns: `*` matches any run of characters (none
 * included), `?` exactly one, every other character itself; matching is
 * case-sensitive unless asked to fold ASCII letters. The matcher walks the name once with a single saved
 * backtrack point and never builds a regular expression, so no pattern can
 * make it slow: at worst it costs name length × pattern length steps.
 */
export type GlobMatcher = (name: string) => boolean;

const STAR = 42; // '*'
const QUESTION = 63; // '?'

/** ASCII letters folded to lower case; tool names are ASCII, so this is the whole case rule. */
function fold(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

/** Whether `name` matches one glob `pattern`; `ignoreCase` folds ASCII letters (A-Z) on both sides. */
export function matchGlob(pattern: string, name: string, ignoreCase = false): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    const c = pattern.charCodeAt(p);
    if (c === STAR) {
      star = p++;
      resume = n;
    } else if (
      p < pattern.length &&
      (c === QUESTION || c === name.charCodeAt(n) || (ignoreCase && fold(c) === fold(name.charCodeAt(n))))
    ) {
      p++;
      n++;
    } else if (star !== -1) {
      // Let the last `*` swallow one more character and try again from there.
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (pattern.charCodeAt(p) === STAR) p++;
  return p === pattern.length;
}

/** Whether a pattern has wildcards; one without them matches only itself. */
export function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

/** One matcher for a list of patterns: true when any pattern matches. Compiled once, used per tool or request. */
export function compileGlobs(patterns: readonly string[]): GlobMatcher {
  const exact = new Set<string>();
  const wild: string[] = [];
  for (const pattern of patterns) {
    if (pattern === '*') return () => true;
    if (isGlob(pattern)) wild.push(pattern);
    else exact.add(pattern);
  }
  if (wild.length === 0) return (name) => exact.has(name);
  return (name) => exact.has(name) || wild.some((pattern) => matchGlob(pattern, name));
}
