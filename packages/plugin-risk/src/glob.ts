/**
 * Matches `text` against a pattern where `*` is any run of characters and `?`
 * one character. Greedy with one backtrack point, so the cost is bounded by
 * pattern length times text length, whatever the input.
 */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    const c = pattern.charCodeAt(p);
    if (p < pattern.length && (c === 63 /* ? */ || c === text.charCodeAt(t))) {
      p++;
      t++;
    } else if (p < pattern.length && c === 42 /* * */) {
      star = p++;
      resume = t;
    } else if (star !== -1) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern.charCodeAt(p) === 42) p++;
  return p === pattern.length;
}

/** True if any pattern matches (case-insensitive). */
export function anyGlob(patterns: readonly string[] | undefined, text: string): boolean {
  if (!patterns || patterns.length === 0) return false;
  const lower = text.toLowerCase();
  return patterns.some((pattern) => globMatch(pattern.toLowerCase(), lower));
}
