import { describe, expect, it } from 'vitest';
import { MetaKey } from '@sluice/core';
import { createTestKit, errorOf, textOf } from '@sluice/testing';
import { LoopGuardErrorCode, loopGuard } from '@sluice/plugin-loop-guard';
import { hop, readForwarded } from './tools.js';

const chainTools = ['a', 'b', 'c', 'd'].map(hop);

describe('the provider side: every call is checked against the incoming stack, then appends itself', () => {
  it('appends the tool to the stack it forwards, under both keys', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()], tools: chainTools });
    const seen = readForwarded(await kit.call('a', { path: ['b', 'c'] }));
    expect(seen.stack).toEqual(['a', 'b', 'c']);
    expect(seen.plain).toEqual(['a', 'b', 'c']);
    await kit.close();
  });

  it('extends the stack a request brings in', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()], tools: chainTools });
    const seen = readForwarded(await kit.call('a', {}, { [MetaKey.CALL_STACK]: ['elsewhere.run', 'elsewhere.step'] }));
    expect(seen.stack).toEqual(['elsewhere.run', 'elsewhere.step', 'a']);
    await kit.close();
  });

  it('refuses an in-process chain a -> b -> c -> a at the repeated hop, naming the cycle', async () => {
    let runsOfC = 0;
    const counted = hop('c');
    const countedC: typeof counted = { ...counted, handler: (args, ctx) => (runsOfC++, counted.handler(args, ctx)) };
    const kit = await createTestKit({
      plugins: [loopGuard()],
      tools: [hop('a'), hop('b'), countedC],
    });
    const result = await kit.call('a', { path: ['b', 'c', 'a', 'b'] });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      entry: 'a',
      cycle: ['a', 'b', 'c', 'a'],
      side: 'provider',
    });
    expect(textOf(result)).toContain('a -> b -> c -> a');
    expect(runsOfC).toBe(1);
    expect(kit.logs.events('loop_guard.loop_detected')[0]).toMatchObject({ entry: 'a', side: 'provider' });
    await kit.close();
  });

  it('refuses a request whose incoming stack already names the tool', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()], tools: chainTools });
    const result = await kit.call('b', {}, { [MetaKey.CALL_STACK]: ['x', 'b', 'y'] });
    expect(errorOf(result)).toMatchObject({ code: LoopGuardErrorCode.LOOP_DETECTED, cycle: ['b', 'y', 'b'] });
    await kit.close();
  });

  it('shortens a long cycle in the message and keeps it whole in the details', async () => {
    const kit = await createTestKit({ plugins: [loopGuard({ maxDepth: 64 })], tools: chainTools });
    const between = Array.from({ length: 10 }, (_, i) => `svc.t${i}`);
    const result = await kit.call('a', {}, { callStack: ['first', 'a', ...between] });
    expect(errorOf(result)?.cycle).toEqual(['a', ...between, 'a']);
    expect(textOf(result)).toContain(
      'a -> svc.t0 -> svc.t1 -> svc.t2 -> ... (4 more) -> svc.t7 -> svc.t8 -> svc.t9 -> a',
    );
    await kit.close();
  });

  it('refuses the call that would make the stack longer than maxDepth, though no name repeats', async () => {
    const kit = await createTestKit({ plugins: [loopGuard({ maxDepth: 3 })], tools: chainTools });
    expect(readForwarded(await kit.call('a', { path: ['b', 'c'] })).stack).toEqual(['a', 'b', 'c']);
    const result = await kit.call('a', { path: ['b', 'c', 'd'] });
    expect(errorOf(result)).toMatchObject({ code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP, depth: 3, maxDepth: 3 });
    expect(kit.logs.events('loop_guard.too_deep')).toHaveLength(1);
    await kit.close();
  });

  it('allows 16 tools in a stack by default and refuses the 17th', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()], tools: chainTools });
    const fifteen = Array.from({ length: 15 }, (_, i) => `svc.t${i}`);
    expect(readForwarded(await kit.call('a', {}, { callStack: fifteen })).stack).toHaveLength(16);
    const result = await kit.call('a', {}, { callStack: [...fifteen, 'svc.t15'] });
    expect(errorOf(result)?.code).toBe(LoopGuardErrorCode.CALL_STACK_TOO_DEEP);
    await kit.close();
  });

  it('with originService, names its entries service/tool and records the origin', async () => {
    const kit = await createTestKit({ plugins: [loopGuard({ originService: 'svcA' })], tools: chainTools });
    const seen = readForwarded(await kit.call('a', { path: ['b'] }, { callStack: ['svcB/a'] }));
    expect(seen).toEqual({
      stack: ['svcB/a', 'svcA/a', 'svcA/b'],
      plain: ['svcB/a', 'svcA/a', 'svcA/b'],
      origin: 'svcA',
    });
    const looped = await kit.call('a', { path: ['b', 'a'] });
    expect(errorOf(looped)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      cycle: ['svcA/a', 'svcA/b', 'svcA/a'],
    });
    await kit.close();
  });

  it('in audit mode logs the loop, lets the call through and keeps passing the stack', async () => {
    const kit = await createTestKit({ plugins: [loopGuard({ mode: 'audit' })], tools: chainTools });
    const seen = readForwarded(await kit.call('a', { path: ['b', 'a'] }));
    expect(seen.stack).toEqual(['a', 'b', 'a']);
    expect(kit.logs.events('audit.refusal')[0]).toMatchObject({
      plugin: 'loop-guard',
      code: LoopGuardErrorCode.LOOP_DETECTED,
    });
    await kit.close();
  });

  it('in audit mode reads a malformed stack as empty and logs it', async () => {
    const kit = await createTestKit({ plugins: [loopGuard({ mode: 'audit' })], tools: chainTools });
    const seen = readForwarded(await kit.call('a', {}, { callStack: 'not-a-list' }));
    expect(seen.stack).toEqual(['a']);
    expect(kit.logs.events('loop_guard.malformed_stack')[0]?.reason).toMatch(/must be an array/);
    await kit.close();
  });

  it('does nothing when off', async () => {
    const kit = await createTestKit({ plugins: [loopGuard({ mode: 'off' })], tools: chainTools });
    const seen = readForwarded(await kit.call('a', { path: ['b'] }, { callStack: ['a'] }));
    expect(seen.stack).toBeUndefined();
    await kit.close();
  });
});

describe('the wire format', () => {
  it('honours a request that carries only the plain callStack key, and forwards both keys', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()], tools: chainTools });
    const seen = readForwarded(await kit.call('b', {}, { callStack: ['serviceA.run', 'getAnalysis'] }));
    expect(seen.stack).toEqual(['serviceA.run', 'getAnalysis', 'b']);
    expect(seen.plain).toEqual(['serviceA.run', 'getAnalysis', 'b']);
    const looped = await kit.call('b', {}, { callStack: ['b'] });
    expect(errorOf(looped)?.code).toBe(LoopGuardErrorCode.LOOP_DETECTED);
    await kit.close();
  });

  it('reads the longer stack when the two keys differ (a plain-key service forwarded ours unchanged)', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()], tools: chainTools });
    const meta = { [MetaKey.CALL_STACK]: ['s.one'], callStack: ['s.one', 's.two', 'c'] };
    expect(errorOf(await kit.call('c', {}, meta))?.code).toBe(LoopGuardErrorCode.LOOP_DETECTED);
    const seen = readForwarded(await kit.call('a', {}, meta));
    expect(seen.stack).toEqual(['s.one', 's.two', 'c', 'a']);
    await kit.close();
  });

  it('answers a malformed stack with JSON-RPC -32602 and a message saying what is wrong', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()], tools: chainTools });
    const cases: [unknown, RegExp][] = [
      ['a', /must be an array of tool names, got a string/],
      [{ 0: 'a', length: 1 }, /must be an array of tool names, got an object/],
      [['ok', 7], /\[1\] must be a tool name string, got a number/],
      [[''], /must have 1-256 characters, got 0/],
      [['x'.repeat(257)], /must have 1-256 characters, got 257/],
      [Array.from({ length: 257 }, () => 's.t'), /has 257 entries; at most 256/],
    ];
    for (const [stack, message] of cases) {
      const failure = await kit.call('a', {}, { callStack: stack }).catch((e: unknown) => e);
      expect(failure, JSON.stringify(stack).slice(0, 40)).toMatchObject({
        code: -32602,
        message: expect.stringMatching(message) as unknown,
      });
    }
    await expect(kit.call('a', {}, { [MetaKey.CALL_STACK]: [null] })).rejects.toMatchObject({ code: -32602 });
    await kit.close();
  });

  it('reads an absent or null stack as empty', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()], tools: chainTools });
    expect(readForwarded(await kit.call('a', {}, { callStack: null })).stack).toEqual(['a']);
    expect(readForwarded(await kit.call('a', {}, { other: 1 })).stack).toEqual(['a']);
    await kit.close();
  });
});
