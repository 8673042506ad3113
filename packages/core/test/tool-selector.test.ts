import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SluiceError, ToolSelectorListSchema, selectTools } from '@sluice/core';
import { parseToolSelector, selects } from '../src/tool-selector.js';
import type { ToolSubject } from '@sluice/core';

/** An imported tool as selectors see it: exposed name, upstream, name at the upstream. */
function imported(name: string, upstream: string, originalName: string): ToolSubject {
  return { name, source: { kind: 'upstream', upstream, originalName } };
}

/** Glob meaning by dynamic programming over (pattern, name) prefixes: the reference the matcher must agree with. */
function referenceGlob(pattern: string, name: string, ignoreCase: boolean): boolean {
  const fold = (c: string) => (ignoreCase && c >= 'A' && c <= 'Z' ? c.toLowerCase() : c);
  let row = Array.from({ length: name.length + 1 }, (_, n) => n === 0);
  for (const p of pattern) {
    const next = [p === '*' && row[0] === true];
    for (let n = 1; n <= name.length; n++) {
      if (p === '*') next[n] = row[n] === true || next[n - 1] === true;
      else next[n] = row[n - 1] === true && (p === '?' || fold(p) === fold(name[n - 1] as string));
    }
    row = next;
  }
  return row[name.length] === true;
}

/** The list semantics spelt out plainly over the reference glob. */
function referenceList(selectors: readonly string[], subject: ToolSubject, ignoreCase: boolean): boolean {
  const hit = (text: string) => {
    const body = text.replace(/^!/, '');
    const slash = body.indexOf('/');
    if (slash === -1) return referenceGlob(body, subject.name, ignoreCase);
    const source = subject.source;
    if (source?.upstream === undefined || source.originalName === undefined) return false;
    return (
      referenceGlob(body.slice(0, slash), source.upstream, ignoreCase) &&
      referenceGlob(body.slice(slash + 1), source.originalName, ignoreCase)
    );
  };
  const include = selectors.filter((s) => !s.startsWith('!'));
  const exclude = selectors.filter((s) => s.startsWith('!'));
  if (selectors.length === 0) return false;
  return (include.length === 0 || include.some(hit)) && !exclude.some(hit);
}

const text = (chars: string[], min = 0) =>
  fc.array(fc.constantFrom(...chars), { minLength: min, maxLength: 10 }).map((a) => a.join(''));
const glob = text(['a', 'B', '.', '-', '*', '?'], 1);
const selector = fc
  .tuple(fc.boolean(), fc.option(text(['u', 'V', '*'], 1), { nil: undefined }), glob)
  .map(([not, upstream, g]) => `${not ? '!' : ''}${upstream === undefined ? '' : `${upstream}/`}${g}`);
const subject = fc
  .tuple(
    text(['a', 'b', 'A', '.', '-']),
    fc.option(fc.tuple(text(['u', 'v', 'U']), text(['a', 'B', '-'])), { nil: undefined }),
  )
  .map(([name, from]): ToolSubject =>
    from === undefined ? { name } : { name, source: { kind: 'upstream', upstream: from[0], originalName: from[1] } },
  );

describe('tool selectors', () => {
  it('selects by * and ? globs on the exposed name, with every other character literal', () => {
    const matches = selectTools(['crm.*', 'get_?']);
    expect(['crm.find', 'crm.a.b', 'get_x'].map(matches)).toEqual([true, true, true]);
    expect(['crmXfind', 'xcrm.find', 'get_xy', 'other'].map(matches)).toEqual([false, false, false, false]);
  });

  it('excludes with !, and a list of only exclusions selects every other tool', () => {
    expect(selectTools(['!admin.*'])('search')).toBe(true);
    expect(selectTools(['!admin.*'])('admin.wipe')).toBe(false);
    const mixed = selectTools(['crm.*', '!crm.delete_*']);
    expect(['crm.find', 'crm.delete_all', 'search'].map(mixed)).toEqual([true, false, false]);
  });

  it('selects nothing when the list is empty, everything with *', () => {
    expect(selectTools([])('anything')).toBe(false);
    expect(selectTools(['*'])('anything')).toBe(true);
  });

  it('is case-sensitive unless ignoreCase folds ASCII letters', () => {
    expect(selectTools(['Search_*'])('search_docs')).toBe(false);
    expect(selectTools(['Search_*'], { ignoreCase: true })('search_DOCS')).toBe(true);
    expect(selectTools(['!ADMIN.*'], { ignoreCase: true })('admin.wipe')).toBe(false);
  });

  it('limits a qualified selector to one upstream and matches the name there', () => {
    const matches = selectTools(['github/create_*']);
    expect(matches(imported('gh.create_issue', 'github', 'create_issue'))).toBe(true);
    expect(matches(imported('create_issue', 'gitlab', 'create_issue'))).toBe(false);
    expect(matches({ name: 'create_issue' })).toBe(false);
    expect(matches({ name: 'create_issue', source: { kind: 'local' } })).toBe(false);
    expect(selectTools(['git*/*'])(imported('x', 'gitlab', 'y'))).toBe(true);
    expect(selectTools(['*', '!github/delete_*'])(imported('gh.delete_repo', 'github', 'delete_repo'))).toBe(false);
  });

  it('reads one selector on its own: ! inverts it', () => {
    expect(selects(parseToolSelector('!a*'), 'abc')).toBe(false);
    expect(selects(parseToolSelector('!a*'), 'xyz')).toBe(true);
    expect(parseToolSelector('!up/t?')).toEqual({ text: '!up/t?', exclude: true, upstream: 'up', glob: 't?' });
  });

  it('refuses malformed selectors with a reason, both when parsed and in option schemas', () => {
    const reasons: [string, RegExp][] = [
      ['', /empty/],
      ['!', /empty/],
      ['a b', /has " "/],
      ['a/b/c', /at most one "\/"/],
      ['/x', /upstream qualifier is empty/],
      ['x/', /tool-name glob is empty/],
      ['x'.repeat(257), /longer than 256/],
      [`${'u'.repeat(65)}/x`, /longer than 64/],
      ['(a|b)', /has "\("/],
    ];
    for (const [bad, reason] of reasons) {
      let thrown: unknown;
      try {
        parseToolSelector(bad);
      } catch (error) {
        thrown = error;
      }
      expect(SluiceError.is(thrown) && thrown.code).toBe('INVALID_OPTIONS');
      expect((thrown as Error).message).toMatch(reason);
      const parsed = ToolSelectorListSchema.safeParse(['ok', bad]);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.path).toEqual([1]);
      expect(parsed.error?.issues[0]?.message).toMatch(reason);
    }
    expect(() => selectTools(['ok', 'a b'])).toThrow(/Invalid tool selector "a b"/);
  });

  it('accepts every tool name as a selector that selects that name alone, and * selects every name', () => {
    const toolName = fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/);
    fc.assert(
      fc.property(toolName, toolName, (name, other) => {
        expect(ToolSelectorListSchema.safeParse([name]).success).toBe(true);
        expect(selectTools([name])(name)).toBe(true);
        expect(selectTools(['*'])(other)).toBe(true);
        if (name !== other) expect(selectTools([name])(other)).toBe(false);
      }),
    );
  });

  it('agrees with a plain reference reading on random selectors and tools', () => {
    fc.assert(
      fc.property(fc.array(selector, { maxLength: 4 }), subject, fc.boolean(), (selectors, tool, ignoreCase) => {
        expect(selectTools(selectors, { ignoreCase })(tool)).toBe(referenceList(selectors, tool, ignoreCase));
      }),
      { numRuns: 3_000 },
    );
  });

  it('never builds a regular expression from a selector or a name', () => {
    const Original = globalThis.RegExp;
    let built = 0;
    globalThis.RegExp = new Proxy(Original, {
      construct(target, args: [string | RegExp, string?]) {
        built++;
        return new target(...args);
      },
      apply(target, _this, args: [string | RegExp, string?]) {
        built++;
        return target(...args);
      },
    });
    try {
      fc.assert(
        fc.property(fc.array(selector, { maxLength: 4 }), subject, fc.boolean(), (selectors, tool, ignoreCase) => {
          selectTools(selectors, { ignoreCase })(tool);
        }),
        { numRuns: 500 },
      );
    } finally {
      globalThis.RegExp = Original;
    }
    expect(built).toBe(0);
  });

  it('answers selectors built to make backtracking matchers explode', () => {
    const name = 'a'.repeat(5_000);
    expect(selectTools([`${'*a'.repeat(60)}b`])(name)).toBe(false);
    expect(selectTools([`x/${'*a'.repeat(60)}`])(imported('n', 'x', name))).toBe(true);
  });
});
