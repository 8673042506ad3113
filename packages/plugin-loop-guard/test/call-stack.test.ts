import { describe, expect, it } from 'vitest';
import { CoreErrorCode, MetaKey, SluiceError } from '@sluice/core';
import { LoopGuardErrorCode, MAX_ENTRY_LENGTH, getCallStack, withCallStack } from '@sluice/plugin-loop-guard';

describe('getCallStack', () => {
  it('reads our key, the plain key, or the longer of the two', () => {
    expect(getCallStack({ [MetaKey.CALL_STACK]: ['a'] })).toEqual(['a']);
    expect(getCallStack({ callStack: ['serviceA.run', 'getAnalysis'] })).toEqual(['serviceA.run', 'getAnalysis']);
    expect(getCallStack({ [MetaKey.CALL_STACK]: ['a', 'b'], callStack: ['a'] })).toEqual(['a', 'b']);
    expect(getCallStack({ [MetaKey.CALL_STACK]: ['a'], callStack: ['a', 'b'] })).toEqual(['a', 'b']);
  });

  it('reads nothing from a missing _meta, a missing key, or null', () => {
    expect(getCallStack(undefined)).toEqual([]);
    expect(getCallStack({})).toEqual([]);
    expect(getCallStack({ callStack: null, [MetaKey.CALL_STACK]: null })).toEqual([]);
  });

  it('ignores a stack that only an inherited property carries', () => {
    const inherited = Object.create({ callStack: ['a'] }) as object;
    expect(getCallStack(inherited)).toEqual([]);
  });

  it('throws a -32602 SluiceError for a malformed value under either key', () => {
    for (const meta of [
      { callStack: 'a' },
      { [MetaKey.CALL_STACK]: [1] },
      { callStack: ['ok'], [MetaKey.CALL_STACK]: {} },
    ]) {
      let thrown: unknown;
      try {
        getCallStack(meta);
      } catch (error) {
        thrown = error;
      }
      expect(SluiceError.is(thrown)).toBe(true);
      expect(thrown).toMatchObject({ code: CoreErrorCode.INVALID_PARAMS, rpcCode: -32602 });
    }
  });
});

describe('withCallStack', () => {
  it('returns a copy of _meta with the name appended under both keys, leaving the input alone', () => {
    const meta = { callStack: ['serviceA.run'], traceparent: '00-abc-def-01' };
    const out = withCallStack(meta, 'getAnalysis');
    expect(out).toEqual({
      traceparent: '00-abc-def-01',
      callStack: ['serviceA.run', 'getAnalysis'],
      [MetaKey.CALL_STACK]: ['serviceA.run', 'getAnalysis'],
    });
    expect(meta.callStack).toEqual(['serviceA.run']);
  });

  it('starts a stack when there is none, and drops __proto__ instead of merging it', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "k": 1}') as Record<string, unknown>;
    const out = withCallStack(hostile, 'first');
    expect(out.callStack).toEqual(['first']);
    expect(Object.keys(out).sort()).toEqual(['callStack', MetaKey.CALL_STACK, 'k'].sort());
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(withCallStack(undefined, 'x').callStack).toEqual(['x']);
  });

  it('refuses a name that cannot be an entry', () => {
    expect(() => withCallStack({}, '')).toThrow(
      expect.objectContaining({ code: LoopGuardErrorCode.INVALID_STACK_ENTRY }),
    );
    expect(() => withCallStack({}, 'x'.repeat(MAX_ENTRY_LENGTH + 1))).toThrow(/1-256 characters/);
  });
});
