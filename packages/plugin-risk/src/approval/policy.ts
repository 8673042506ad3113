import type { ApprovalConfig } from './options.js';
import { selectTools } from '@sluice/core';
import type { ToolMatcher } from '@sluice/core';
import type { RiskLevel } from '../scoring/levels.js';
import { levelIndex } from '../scoring/levels.js';

/**
 * Whether a person approves each call of a tool, decided once at import.
 * The tool's own flag (`hitl` on its policy or a rule) wins; otherwise a tool
 * on the auto-execute list runs unasked; otherwise a tool whose composed
 * level (before any HITL credit) is at or above `defaultFromLevel` asks.
 */
export function needsApproval(
  explicit: boolean | undefined,
  names: readonly string[],
  composed: RiskLevel,
  approval: ApprovalConfig,
): boolean {
  if (explicit !== undefined) return explicit;
  const autoExecute = matcherOf(approval.autoExecute);
  if (names.some((name) => autoExecute(name))) return false;
  return approval.defaultFromLevel !== undefined && levelIndex(composed) >= levelIndex(approval.defaultFromLevel);
}

const matchers = new WeakMap<readonly string[], ToolMatcher>();

/** The auto-execute list as core tool selectors, case-insensitive, compiled once per list. */
function matcherOf(selectors: readonly string[]): ToolMatcher {
  let matcher = matchers.get(selectors);
  if (matcher === undefined) matchers.set(selectors, (matcher = selectTools(selectors, { ignoreCase: true })));
  return matcher;
}
