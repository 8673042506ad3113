import { describe, expect, it } from 'vitest';
import { applyHitlMitigation, composeRisk } from '@sluice/plugin-risk';
import type { RiskLevel } from '@sluice/plugin-risk';

const side = (level: RiskLevel, total: number, floors: string[] = []) => ({ level, total, floors });

describe('composed risk', () => {
  it('adds the server and tool totals and buckets again when no floor tripped', () => {
    expect(composeRisk(side('L1', 0), side('L1', 0)).level).toBe('L1');
    expect(composeRisk(side('L2', 1), side('L1', 0)).level).toBe('L2');
    expect(composeRisk(side('L2', 1), side('L2', 1)).level).toBe('L3');
    expect(composeRisk(side('L3', 2), side('L2', 1)).level).toBe('L4');
    expect(composeRisk(side('L3', 2), side('L3', 2)).level).toBe('L5');
  });

  it('keeps the higher level when the server tripped a floor', () => {
    const risk = composeRisk(side('L5', 0, ['non_loopback_no_auth_trust_unknown']), side('L2', 1));
    expect(risk).toMatchObject({ level: 'L5', floored: true, server: 'L5', tool: 'L2' });
  });

  it('keeps the higher level, not the sum, when the tool tripped a floor', () => {
    expect(composeRisk(side('L3', 2), side('L4', 3, ['no_description_no_annotations'])).level).toBe('L4');
    expect(composeRisk(side('L1', 0), side('L5', 1, ['irreversible_verb_in_name'])).level).toBe('L5');
  });
});

describe('HITL mitigation', () => {
  it.each([
    ['L5', 'L4'],
    ['L4', 'L3'],
    ['L3', 'L2'],
    ['L2', 'L1'],
    ['L1', 'L1'],
    ['L0', 'L0'],
  ] as const)('lowers %s to %s', (from, to) => {
    expect(applyHitlMitigation(from)).toBe(to);
  });

  it('applies after composition and records that it did', () => {
    const risk = composeRisk(side('L2', 1), side('L2', 1), { hitl: true });
    expect(risk).toMatchObject({ composed: 'L3', level: 'L2', hitlMitigated: true });
    const floor = composeRisk(side('L1', 0), side('L1', 0), { hitl: true });
    expect(floor).toMatchObject({ composed: 'L1', level: 'L1', hitlMitigated: false });
  });
});
