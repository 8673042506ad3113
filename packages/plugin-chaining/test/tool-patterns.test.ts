import { describe, expect, it } from 'vitest';
import { toolMatcher } from '../src/tool-patterns.js';

describe('tool-name patterns', () => {
  it('matches * and ? globs, anchored, with dots taken literally', () => {
    const match = toolMatcher(['crm.*', 'get_?']);
    expect(['crm.find', 'crm.a.b', 'get_x'].map(match)).toEqual([true, true, true]);
    expect(['crmXfind', 'xcrm.find', 'get_xy', 'other'].map(match)).toEqual([false, false, false, false]);
  });

  it('excludes with !, and a list of only exclusions selects the rest', () => {
    const match = toolMatcher(['!admin.*']);
    expect(match('admin.wipe')).toBe(false);
    expect(match('search')).toBe(true);
    const mixed = toolMatcher(['crm.*', '!crm.delete_*']);
    expect([mixed('crm.find'), mixed('crm.delete_all'), mixed('search')]).toEqual([true, false, false]);
  });

  it('selects nothing when empty', () => {
    expect(toolMatcher([])('anything')).toBe(false);
  });
});
