import { describe, expect, it } from 'vitest';
import { ChainRules } from '../src/chain-rules.js';

const rules = (tools: string[], targets: string[]) => new ChainRules({ maxDepth: 5, tools, targets });

describe('chain rules', () => {
  it('follows and targets the tools core’s selectors select, ! excluding', () => {
    const chain = rules(['crm.*', 'get_?'], ['!admin.*']);
    expect(['crm.find', 'get_x', 'crmXfind', 'get_xy'].map((n) => chain.follows(n))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(['search', 'admin.wipe'].map((n) => chain.targetable(n))).toEqual([true, false]);
  });

  it('reads upstream/ selectors against the tool’s upstream, and never selects a bare name with them', () => {
    const chain = rules(['crm/*'], ['*']);
    const fromCrm = { name: 'crm_find', source: { kind: 'upstream', upstream: 'crm', originalName: 'find' } };
    expect(chain.follows(fromCrm)).toBe(true);
    expect(chain.follows('crm_find')).toBe(false);
  });

  it('lets a tool’s own policy win over the selectors', () => {
    const chain = rules([], ['*']);
    expect(chain.follows('search')).toBe(false);
    expect(chain.follows('search', { follow: true })).toBe(true);
    expect(chain.targetable('search', { target: false })).toBe(false);
  });
});
