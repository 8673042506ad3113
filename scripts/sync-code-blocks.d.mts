/** The documents whose `<!-- source: file#region -->` blocks are checked and synced. */
export function documentsWithBlocks(): string[];
/** The text of `// #region name` in `file`, for a `file#name` reference. */
export function region(source: string): string;
