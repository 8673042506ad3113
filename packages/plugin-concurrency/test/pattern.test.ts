import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PatternSet, PatternTable, TOOL_NAME_PATTERN } from '../src/pattern.js';

const toolName = fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/);

describe('tool-name patterns', () => {
  it('match "*" across dots and "?" as one character, literally otherwise', () => {
    const set = new PatternSet(['billing.*', 'user?.delete', 'a-b.c']);
    expect(set.has('billing.refund')).toBe(true);
    expect(set.has('billing.refund.partial')).toBe(true);
    expect(set.has('billingXrefund')).toBe(false);
    expect(set.has('users.delete')).toBe(true);
    expect(set.has('user.delete')).toBe(false);
    expect(set.has('a-b.c')).toBe(true);
    expect(set.has('a-bxc')).toBe(false);
  });

  it('prefer an exact name, then the first pattern listed', () => {
    const table = new PatternTable([
      ['billing.*', 'first'],
      ['*', 'second'],
      ['billing.refund', 'exact'],
    ]);
    expect(table.lookup('billing.refund')).toBe('exact');
    expect(table.lookup('billing.charge')).toBe('first');
    expect(table.lookup('other')).toBe('second');
  });

  it('let every name match itself and "*", and accept every tool name as a pattern', () => {
    fc.assert(
      fc.property(toolName, toolName, (name, other) => {
        expect(TOOL_NAME_PATTERN.test(name)).toBe(true);
        expect(new PatternSet([name]).has(name)).toBe(true);
        expect(new PatternSet(['*']).has(other)).toBe(true);
        if (name !== other) expect(new PatternSet([name]).has(other)).toBe(false);
      }),
    );
  });
});
