import { describe, expect, it } from 'vitest';
import { CoreErrorCode, SluiceError } from '@sluice/core';

/** A second copy of the module, as a second copy of @sluice/core in node_modules would load it. */
async function anotherCopy(): Promise<typeof SluiceError> {
  // The query makes the module loader treat the file as a module of its own, with its own class.
  const specifier: string = '../src/errors.ts?another-copy';
  const copy = (await import(specifier)) as { SluiceError: typeof SluiceError };
  return copy.SluiceError;
}

describe('SluiceError', () => {
  it('is an instance of the SluiceError of another copy of core, both ways', async () => {
    const Other = await anotherCopy();
    expect(Other).not.toBe(SluiceError);
    const ours = new SluiceError(CoreErrorCode.INVALID_STATE, 'ours');
    const theirs = new Other(CoreErrorCode.INVALID_STATE, 'theirs');
    expect(Object.getPrototypeOf(theirs)).not.toBe(SluiceError.prototype);
    expect(theirs instanceof SluiceError).toBe(true);
    expect(ours instanceof Other).toBe(true);
    expect(SluiceError.is(theirs)).toBe(true);
  });

  it('is not an instance for plain errors and look-alikes', () => {
    expect(new Error('x') instanceof SluiceError).toBe(false);
    expect({ code: 'INVALID_STATE', name: 'SluiceError', message: 'x' } instanceof SluiceError).toBe(false);
    expect((null as unknown) instanceof SluiceError).toBe(false);
  });

  it('keeps the prototype check for a subclass', () => {
    class Special extends SluiceError {}
    expect(new Special('X', 'x') instanceof Special).toBe(true);
    expect(new Special('X', 'x') instanceof SluiceError).toBe(true);
    expect(new SluiceError('X', 'x') instanceof Special).toBe(false);
  });
});
