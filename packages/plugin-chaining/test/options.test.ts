import { describe, expect, it } from 'vitest';
import { CoreErrorCode, SluiceError } from '@sluice/core';
import { ChainingOptions, chaining } from '@sluice/plugin-chaining';

const failure = (options: unknown): unknown => {
  try {
    chaining(options as never);
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('chaining options', () => {
  it('defaults to enforce, depth 5, every tool followed and targetable', () => {
    expect(ChainingOptions.parse({})).toEqual({ mode: 'enforce', maxDepth: 5, tools: ['*'], targets: ['*'] });
    expect(chaining()).toMatchObject({ name: 'chaining', mode: 'enforce' });
  });

  it('throws at construction naming the bad field', () => {
    for (const [options, field] of [
      [{ maxDepth: 0 }, 'maxDepth'],
      [{ maxDepth: 2.5 }, 'maxDepth'],
      [{ mode: 'loud' }, 'mode'],
      [{ tools: ['has space'] }, 'tools.0'],
      [{ targets: 'x' }, 'targets'],
      [{ depth: 3 }, 'depth'],
    ] as const) {
      const error = failure(options);
      expect(SluiceError.is(error) && error.code).toBe(CoreErrorCode.INVALID_OPTIONS);
      expect((error as Error).message).toContain(field);
    }
  });
});
