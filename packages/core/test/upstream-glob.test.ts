import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileGlobs, matchGlob } from '../src/glob.js';

/** The meaning of a glob, spelt as an anchored regular expression: the reference to check the matcher against. */
function reference(pattern: string, name: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\-]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 's').test(name);
}

describe('tool-name globs', () => {
  it('matches * as any run, ? as one character, everything else literally', () => {
    expect(matchGlob('*', '')).toBe(true);
    expect(matchGlob('read_*', 'read_file')).toBe(true);
    expect(matchGlob('read_*', 'write_file')).toBe(false);
    expect(matchGlob('*_file', 'read_file')).toBe(true);
    expect(matchGlob('r?ad', 'read')).toBe(true);
    expect(matchGlob('r?ad', 'rad')).toBe(false);
    expect(matchGlob('a*b*c', 'aXXbYYc')).toBe(true);
    expect(matchGlob('a*b*c', 'aXXcYYb')).toBe(false);
    expect(matchGlob('fs.read', 'fsXread')).toBe(false);
    expect(matchGlob('Read', 'read')).toBe(false);
  });

  it('agrees with the regular-expression reading of every pattern', () => {
    const text = (chars: string[]) => fc.array(fc.constantFrom(...chars), { maxLength: 12 }).map((a) => a.join(''));
    fc.assert(
      fc.property(text(['a', 'b', '.', '*', '?']), text(['a', 'b', '.']), (pattern, name) => {
        expect(matchGlob(pattern, name)).toBe(reference(pattern, name));
      }),
      { numRuns: 2_000 },
    );
  });

  it('matches a list when any of its patterns matches, exact names included', () => {
    const matches = compileGlobs(['exact', 'fs_*']);
    expect(['exact', 'fs_read', 'other', 'exactly'].map(matches)).toEqual([true, true, false, false]);
    expect(compileGlobs(['*'])('anything')).toBe(true);
    expect(compileGlobs([])('anything')).toBe(false);
  });

  it('handles patterns built to make backtracking matchers explode', () => {
    const name = 'a'.repeat(5_000);
    expect(matchGlob(`${'*a'.repeat(50)}b`, name)).toBe(false);
    expect(matchGlob(`${'a*'.repeat(50)}a`, name)).toBe(true);
  });
});
