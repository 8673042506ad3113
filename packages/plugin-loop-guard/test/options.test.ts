import { describe, expect, it } from 'vitest';
import { CoreErrorCode } from '@sluice/core';
import { loopGuard } from '@sluice/plugin-loop-guard';
import type { LoopGuardOptions } from '@sluice/plugin-loop-guard';

describe('loopGuard options', () => {
  it('builds a plugin named loop-guard with defaults', () => {
    const plugin = loopGuard();
    expect(plugin).toMatchObject({ name: 'loop-guard', mode: 'enforce' });
    expect(plugin.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('throws at construction, naming the bad field', () => {
    const bad: [unknown, RegExp][] = [
      [{ maxDepth: 0 }, /maxDepth/],
      [{ maxDepth: 257 }, /maxDepth/],
      [{ maxDepth: 2.5 }, /maxDepth/],
      [{ denyToolPrefix: '' }, /denyToolPrefix/],
      [{ denyToolPrefix: ['ok', ''] }, /denyToolPrefix\.1/],
      [{ allowTools: 'getData' }, /allowTools/],
      [{ allowTools: ['ok', 'a/b/c'] }, /allowTools\.1: not a tool selector/],
      [{ originService: 'svc/a' }, /originService: use 1-100 letters/],
      [{ mode: 'loud' }, /mode/],
      [{ maxdepth: 4 }, /maxdepth|Unrecognized/],
    ];
    for (const [options, field] of bad) {
      expect(() => loopGuard(options as LoopGuardOptions), JSON.stringify(options)).toThrow(
        expect.objectContaining({
          code: CoreErrorCode.INVALID_OPTIONS,
          message: expect.stringMatching(field) as unknown,
        }),
      );
    }
  });
});
