/** Rows as left-aligned columns, indented by two spaces; the last column is not padded. */
export function textTable(rows: readonly (readonly string[])[]): string[] {
  if (rows.length === 0) return ['  (none)'];
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    `  ${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd(),
  );
}
