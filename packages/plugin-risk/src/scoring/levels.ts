/** Risk levels, L0 (the server's own tools) to L5 (critical). */
export const RISK_LEVELS = ['L0', 'L1', 'L2', 'L3', 'L4', 'L5'] as const;

export type RiskLevel = (typeof RISK_LEVELS)[number];

/** What each level means for a tool reached through this server. */
export const LEVEL_LABELS: Readonly<Record<RiskLevel, string>> = Object.freeze({
  L0: 'Verified',
  L1: 'Safe',
  L2: 'Low',
  L3: 'Moderate',
  L4: 'High',
  L5: 'Critical',
});

export function levelIndex(level: RiskLevel): number {
  return RISK_LEVELS.indexOf(level);
}

export function levelAt(index: number): RiskLevel {
  const clamped = Math.min(RISK_LEVELS.length - 1, Math.max(0, Math.trunc(index)));
  return RISK_LEVELS[clamped] as RiskLevel;
}

/** The shared bucketing of an axis total: <=0 L1, 1 L2, 2 L3, 3 L4, >=4 L5. */
export function bucket(total: number): RiskLevel {
  if (total <= 0) return 'L1';
  if (total >= 4) return 'L5';
  return levelAt(total + 1);
}

export function maxLevel(a: RiskLevel, b: RiskLevel): RiskLevel {
  return levelIndex(a) >= levelIndex(b) ? a : b;
}

export function isAbove(level: RiskLevel, cap: RiskLevel): boolean {
  return levelIndex(level) > levelIndex(cap);
}
