import type { ApprovalConfig } from './options.js';
import { anyGlob } from '../glob.js';
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
  if (names.some((name) => anyGlob(approval.autoExecute, name))) return false;
  return approval.defaultFromLevel !== undefined && levelIndex(composed) >= levelIndex(approval.defaultFromLevel);
}
