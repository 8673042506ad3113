/** One line of a diff: unchanged, only in the approved definition, or only in the new one. */
export interface DiffLine {
  readonly op: 'same' | 'removed' | 'added';
  readonly text: string;
}

/** Past this many line pairs the diff is not searched: the old text is shown removed and the new one added. */
export const MAX_DIFF_CELLS = 4_000_000;

/**
 * The line diff of two texts (a longest common subsequence of lines), for an
 * operator comparing an approved definition with the one an upstream
 * declares now. Bounded: the table never holds more than `MAX_DIFF_CELLS`.
 */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head = a.slice(0, start).map((text): DiffLine => ({ op: 'same', text }));
  const tail = a.slice(endA).map((text): DiffLine => ({ op: 'same', text }));
  return [...head, ...middle(a.slice(start, endA), b.slice(start, endB)), ...tail];
}

function middle(a: readonly string[], b: readonly string[]): DiffLine[] {
  const removed = a.map((text): DiffLine => ({ op: 'removed', text }));
  const added = b.map((text): DiffLine => ({ op: 'added', text }));
  if (a.length === 0 || b.length === 0 || (a.length + 1) * (b.length + 1) > MAX_DIFF_CELLS)
    return [...removed, ...added];
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lengths[i * width + j] =
        a[i] === b[j]
          ? (lengths[(i + 1) * width + j + 1] ?? 0) + 1
          : Math.max(lengths[(i + 1) * width + j] ?? 0, lengths[i * width + j + 1] ?? 0);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: 'same', text: a[i] as string });
      i++;
      j++;
    } else if ((lengths[(i + 1) * width + j] ?? 0) >= (lengths[i * width + j + 1] ?? 0))
      out.push({ op: 'removed', text: a[i++] as string });
    else out.push({ op: 'added', text: b[j++] as string });
  }
  while (i < a.length) out.push({ op: 'removed', text: a[i++] as string });
  while (j < b.length) out.push({ op: 'added', text: b[j++] as string });
  return out;
}
