/**
 * Tool-name glob patterns: `*` matches any run of characters (none
 * included), `?` exactly one, every other character itself; matching is
 * case-sensitive. The matcher walks the name once with a single saved
 * backtrack point and never builds a regular expression, so no pattern can
 * make it slow: at worst it costs name length × pattern length steps.
 */
export type GlobMatcher = (name: string) => boolean;

/** Whether `name` matches one glob `pattern`. */
export function matchGlob(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    const c = pattern[p];
    if (c === '*') {
      star = p++;
      resume = n;
    } else if (c !== undefined && (c === '?' || c === name[n])) {
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
  while (pattern[p] === '*') p++;
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
