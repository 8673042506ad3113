import type { RiskLevel } from './levels.js';
import { bucket, levelAt, levelIndex, maxLevel } from './levels.js';

export interface ComposedRisk {
  /** The level the tool is published and capped at. */
  readonly level: RiskLevel;
  /** Server and tool combined, before HITL mitigation. */
  readonly composed: RiskLevel;
  readonly server: RiskLevel;
  readonly tool: RiskLevel;
  /** A floor tripped on either side, so the levels were maxed rather than summed. */
  readonly floored: boolean;
  /** HITL lowered the level by one band. */
  readonly hitlMitigated: boolean;
}

export interface ComposeOptions {
  /** A person approves each call (and something enforces it): lower the level one band, not below L1. */
  readonly hitl?: boolean;
}

/** A scored side: its level, axis total and the floors it tripped. */
export interface ScoredSide {
  readonly level: RiskLevel;
  readonly total: number;
  readonly floors: readonly string[];
}

/**
 * Combines a server's and a tool's scores. A floor on either side keeps the
 * higher of the two levels; otherwise the axis totals add and are bucketed
 * again. HITL then lowers the result one band, never below L1.
 */
export function composeRisk(server: ScoredSide, tool: ScoredSide, options: ComposeOptions = {}): ComposedRisk {
  const floored = server.floors.length > 0 || tool.floors.length > 0;
  const composed = floored ? maxLevel(server.level, tool.level) : bucket(server.total + tool.total);
  const level = options.hitl === true ? applyHitlMitigation(composed) : composed;
  return { level, composed, server: server.level, tool: tool.level, floored, hitlMitigated: level !== composed };
}

/** One band lower, floored at L1 (L0 stays L0: it is never scored). */
export function applyHitlMitigation(level: RiskLevel): RiskLevel {
  if (level === 'L0') return level;
  return levelAt(Math.max(1, levelIndex(level) - 1));
}

/** The composition of the server's own tools: never scored. */
export const LOCAL_RISK: ComposedRisk = Object.freeze({
  level: 'L0',
  composed: 'L0',
  server: 'L0',
  tool: 'L0',
  floored: false,
  hitlMitigated: false,
});
