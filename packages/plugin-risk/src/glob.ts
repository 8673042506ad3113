import { matchGlob } from '@sluice/core';

/** True if any pattern matches (case-insensitive), with the core's linear-time glob matcher. */
export function anyGlob(patterns: readonly string[] | undefined, text: string): boolean {
  if (!patterns || patterns.length === 0) return false;
  const lower = text.toLowerCase();
  return patterns.some((pattern) => matchGlob(pattern.toLowerCase(), lower));
}
