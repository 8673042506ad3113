import { describe, expect, it } from 'vitest';
import { PATTERN_SEVERITY, PoisonPattern, blocks } from '../src/scan/patterns.js';
import type { Severity } from '../src/scan/patterns.js';

const hits = (...severities: Severity[]) => severities.map((severity) => ({ severity }));

describe('severities and what blocks', () => {
  it('gives every signature a severity, the seed nine high and the sink low', () => {
    for (const pattern of Object.values(PoisonPattern))
      expect(['high', 'medium', 'low']).toContain(PATTERN_SEVERITY[pattern]);
    expect(PATTERN_SEVERITY.CROSS_SERVER_IMPERATIVE).toBe('high');
    expect(PATTERN_SEVERITY.SUSPICIOUS_SINK_PARAMETER).toBe('low');
  });

  it('blocks at high by default: one high, or two mediums that add up to one', () => {
    expect(blocks(hits('high'), 'high')).toBe(true);
    expect(blocks(hits('medium'), 'high')).toBe(false);
    expect(blocks(hits('medium', 'medium'), 'high')).toBe(true);
    expect(blocks(hits('medium', 'low'), 'high')).toBe(false);
    expect(blocks(hits('medium', 'low', 'low'), 'high')).toBe(true);
  });

  it('never blocks on weak signals alone, whatever blockAt says', () => {
    expect(blocks(hits('low', 'low', 'low', 'low', 'low'), 'high')).toBe(false);
    expect(blocks(hits('low'), 'low')).toBe(false);
    expect(blocks(hits('medium'), 'medium')).toBe(true);
    expect(blocks(hits('medium'), 'low')).toBe(true);
  });
});
