import { describe, expect, it } from 'vitest';
import { ToolSettings } from '@sluice/core';

describe('per-tool settings tables', () => {
  it('takes the tool’s own setting first, then its exact name, then the first selector written, then the default', () => {
    const table = new ToolSettings({ 'crm.*': 'pattern one', 'crm.find': 'exact', 'crm.f*': 'pattern two' });
    expect(table.resolve('crm.find', 'own', 'default')).toBe('own');
    expect(table.resolve('crm.find', undefined, 'default')).toBe('exact');
    expect(table.resolve('crm.fetch', undefined, 'default')).toBe('pattern one');
    expect(table.resolve('search', undefined, 'default')).toBe('default');
    expect(table.lookup('search')).toBeUndefined();
  });

  it('keeps the first of two entries for one exact name', () => {
    expect(
      new ToolSettings([
        ['a', 1],
        ['a', 2],
      ]).lookup('a'),
    ).toBe(1);
  });

  it('reads qualified and ! selectors as patterns', () => {
    const table = new ToolSettings([
      ['github/search', 'qualified'],
      ['!admin.*', 'not admin'],
    ]);
    const fromGithub = { name: 'gh.search', source: { kind: 'upstream', upstream: 'github', originalName: 'search' } };
    expect(table.lookup(fromGithub)).toBe('qualified');
    expect(table.lookup('search')).toBe('not admin');
    expect(table.lookup('admin.wipe')).toBeUndefined();
  });

  it('folds ASCII case for exact names and selectors when asked', () => {
    const table = new ToolSettings({ Search: 1, 'CRM.*': 2 }, { ignoreCase: true });
    expect([table.lookup('search'), table.lookup('crm.find'), table.lookup('other')]).toEqual([1, 2, undefined]);
    expect(new ToolSettings({ Search: 1 }).lookup('search')).toBeUndefined();
  });

  it('refuses a malformed selector when built', () => {
    expect(() => new ToolSettings({ 'a b': 1 })).toThrow(/Invalid tool selector "a b"/);
  });
});
