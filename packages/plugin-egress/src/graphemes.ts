/**
 * Where a cut may fall without splitting what a reader sees as one character:
 * an emoji ZWJ sequence (👨‍👩‍👧), a flag (🇫🇷), an emoji with its skin tone
 * or variation selector, a letter with its combining marks.
 */

/** How far back a cut looks for the start of its grapheme cluster, in code units. */
export const CLUSTER_WINDOW = 64;
/** How far ahead it looks to learn whether the cut point is a boundary. */
const LOOKAHEAD = 16;

let segmenter: Intl.Segmenter | undefined;

const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * Moves a cut at code-unit `index` back to the start of the grapheme cluster
 * it falls in, so the kept prefix ends on a whole cluster. Only a window
 * around the cut is segmented, so the cost does not grow with the text; a
 * cluster longer than the window (a stack of combining marks) keeps the cut
 * where it was, which is still a code point boundary.
 */
export function clusterStart(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return index;
  let start = Math.max(0, index - CLUSTER_WINDOW);
  // Never start the window on the second half of a surrogate pair.
  if (start > 0 && isLow(text.charCodeAt(start))) start--;
  const window = text.slice(start, Math.min(text.length, index + LOOKAHEAD));
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let boundary = 0;
  for (const { index: at } of segmenter.segment(window)) {
    if (start + at > index) break;
    boundary = at;
  }
  // The cluster began before the window: too long to keep whole.
  if (boundary === 0 && start > 0) return index;
  return start + boundary;
}
