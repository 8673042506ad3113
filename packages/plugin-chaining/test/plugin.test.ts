import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CoreErrorCode, SluiceError, definePlugin } from '@sluice/core';
import type { CallContext, CallToolResult, Outcome, Plugin, ToolDefinition } from '@sluice/core';
import { MetaKey, createTestKit, errorOf, metaOf, textOf } from '@sluice/testing';
import type { ChainRecord } from '@sluice/plugin-chaining';
import { ChainingErrorCode, chaining, next, withNext } from '@sluice/plugin-chaining';
import { Runs, stepTools, text } from './support.js';

const chainOf = (result: CallToolResult) => metaOf<ChainRecord>(result, MetaKey.CHAIN);
const stepsOf = (result: CallToolResult) => chainOf(result)?.steps.map((s) => `${s.tool}:${s.code ?? s.outcome}`);

describe('chain depth', () => {
  it('runs a chain of 5 chained calls and returns the last result', async () => {
    const runs = new Runs();
    const kit = await createTestKit({ plugins: [chaining()], tools: stepTools(5, runs) });
    const result = await kit.call('step0', { n: 0 });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('step5:5');
    expect(stepsOf(result)).toEqual(['step1:ok', 'step2:ok', 'step3:ok', 'step4:ok', 'step5:ok']);
    expect(runs.of('step5')).toBe(1);
    await kit.close();
  });

  it('refuses the 6th chained call with the chain listed, keeping what the 5th returned', async () => {
    const runs = new Runs();
    const kit = await createTestKit({ plugins: [chaining()], tools: stepTools(6, runs) });
    const result = await kit.call('step0', { n: 0 });
    expect(result.isError).toBe(true);
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.TOO_DEEP);
    expect(textOf(result)).toContain('limit of 5 chained calls');
    expect(textOf(result)).toContain(
      'Chain so far: step0 -> step1 (ok) -> step2 (ok) -> step3 (ok) -> step4 (ok) -> step5 (ok) -> step6 (refused: CHAIN_TOO_DEEP).',
    );
    expect(textOf(result)).toContain('step5:5');
    expect(errorOf(result)?.pending).toEqual({ tool: 'step6', arguments: { n: 6 } });
    expect(runs.of('step6')).toBe(0);
    await kit.close();
  });

  it('honours a smaller maxDepth', async () => {
    const kit = await createTestKit({ plugins: [chaining({ maxDepth: 2 })], tools: stepTools(3) });
    const result = await kit.call('step0', { n: 0 });
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.TOO_DEEP);
    expect(stepsOf(result)).toEqual(['step1:ok', 'step2:ok', `step3:${ChainingErrorCode.TOO_DEEP}`]);
    await kit.close();
  });
});

describe('circular chains', () => {
  const pingPong = (runs: Runs, backArgs: (n: number) => Record<string, unknown>): ToolDefinition[] => [
    {
      name: 'A',
      inputSchema: z.object({ n: z.number() }),
      handler: ({ n }: { n: number }) => (runs.hit('A'), withNext(text(`A:${n}`), 'B', { n })),
    } as ToolDefinition,
    {
      name: 'B',
      inputSchema: z.object({ n: z.number() }),
      handler: ({ n }: { n: number }) => (runs.hit('B'), withNext(text(`B:${n}`), 'A', backArgs(n))),
    } as ToolDefinition,
  ];

  it('refuses A -> B -> A with the same arguments as circular', async () => {
    const runs = new Runs();
    const kit = await createTestKit({ plugins: [chaining()], tools: pingPong(runs, (n) => ({ n })) });
    const result = await kit.call('A', { n: 1 });
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.CIRCULAR);
    expect(textOf(result)).toContain('Chain so far: A -> B (ok) -> A (refused: CHAIN_CIRCULAR).');
    expect(textOf(result)).toContain('B:1');
    expect([runs.of('A'), runs.of('B')]).toEqual([1, 1]);
    await kit.close();
  });

  it('treats the same arguments in another key order as the same call', async () => {
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [
        { name: 'A', handler: (args: Record<string, unknown>) => withNext(text('A'), 'B', { x: 1, y: args.y ?? 2 }) },
        { name: 'B', handler: () => withNext(text('B'), 'B', { y: 2, x: 1 }) },
      ],
    });
    const result = await kit.call('A', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.CIRCULAR);
    expect(stepsOf(result)).toEqual(['B:ok', `B:${ChainingErrorCode.CIRCULAR}`]);
    await kit.close();
  });

  it('lets A run again with other arguments, until the depth limit', async () => {
    const runs = new Runs();
    const kit = await createTestKit({ plugins: [chaining()], tools: pingPong(runs, (n) => ({ n: n + 1 })) });
    const result = await kit.call('A', { n: 1 });
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.TOO_DEEP);
    expect(stepsOf(result)).toEqual(['B:ok', 'A:ok', 'B:ok', 'A:ok', 'B:ok', `A:${ChainingErrorCode.TOO_DEEP}`]);
    await kit.close();
  });

  it('carries depth and cycles into a chain started inside a chained call', async () => {
    let nested = 0;
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [
        { name: 'A', handler: () => withNext(text('A'), 'B') },
        {
          name: 'B',
          handler: async (_args: unknown, ctx: CallContext) => {
            // B calls A itself, whose directive names B again: a loop through a handler.
            if (++nested > 3) return text('runaway');
            const inner = await ctx.call('A', {});
            return text(`B saw ${errorOf(inner)?.code ?? textOf(inner)}`);
          },
        },
      ],
    });
    const result = await kit.call('A', {});
    expect(textOf(result)).toBe(`B saw ${ChainingErrorCode.CIRCULAR}`);
    expect(nested).toBe(1);
    await kit.close();
  });
});

describe('checks before a chained call runs', () => {
  it('stops on a next tool this server does not expose', async () => {
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [{ name: 'A', handler: () => withNext(text('A ran'), 'nowhere', {}) }],
    });
    const result = await kit.call('A', {});
    expect(result.isError).toBe(true);
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.UNKNOWN_TOOL);
    expect(textOf(result)).toContain(
      '"nowhere" was named as the next tool, but this server exposes no tool of that name',
    );
    expect(textOf(result)).toContain('Chain so far: A -> nowhere (refused: CHAIN_UNKNOWN_TOOL).');
    expect(textOf(result)).toContain('A ran');
    await kit.close();
  });

  it('stops on a tool that was removed after it was registered', async () => {
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [
        { name: 'A', handler: () => withNext(text('A'), 'gone') },
        { name: 'gone', handler: () => text('gone ran') },
      ],
    });
    kit.server.removeTool('gone');
    const result = await kit.call('A', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.UNKNOWN_TOOL);
    await kit.close();
  });

  it("stops on arguments that break the next tool's input schema, before its handler runs", async () => {
    const runs = new Runs();
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [{ name: 'A', handler: () => withNext(text('A'), 'step1', { n: 'one' }) }, ...stepTools(1, runs).slice(1)],
    });
    const result = await kit.call('A', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.INVALID_ARGUMENTS);
    expect(textOf(result)).toMatch(/Invalid arguments for tool "step1": n: .*expected number/);
    expect(textOf(result)).toContain('Chain so far: A -> step1 (refused: CHAIN_INVALID_ARGUMENTS).');
    expect(runs.of('step1')).toBe(0);
    await kit.close();
  });

  it('stops on a malformed directive and keeps the result that carried it', async () => {
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [{ name: 'A', handler: () => ({ ...text('A ran'), _meta: { [MetaKey.NEXT_TOOL]: { tool: 42 } } }) }],
    });
    const result = await kit.call('A', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.INVALID_DIRECTIVE);
    expect(textOf(result)).toContain('_meta["dev.sluice/nextTool"] is malformed (tool:');
    expect(textOf(result)).toContain('A ran');
    expect(chainOf(result)).toEqual({ origin: 'A', steps: [], stoppedBy: ChainingErrorCode.INVALID_DIRECTIVE });
    await kit.close();
  });

  it('refuses a next tool that the targets patterns exclude', async () => {
    const runs = new Runs();
    const kit = await createTestKit({
      plugins: [chaining({ targets: ['!admin.*'] })],
      tools: [
        { name: 'A', handler: () => withNext(text('A'), 'admin.wipe') },
        { name: 'admin.wipe', handler: () => (runs.hit('wipe'), text('wiped')) },
      ],
    });
    const result = await kit.call('A', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.TARGET_DENIED);
    expect(runs.of('wipe')).toBe(0);
    expect(textOf(await kit.call('admin.wipe', {}))).toBe('wiped');
    await kit.close();
  });
});

describe('what the caller receives', () => {
  it('reads the plain and openai keys as well as its own, and removes the executed directive', async () => {
    for (const key of [MetaKey.NEXT_TOOL, 'nextTool', 'openai/nextTool']) {
      const kit = await createTestKit({
        plugins: [chaining()],
        tools: [
          {
            name: 'A',
            handler: () => ({ ...text('A'), _meta: { [key]: { tool: 'B', arguments: { v: 1 } }, keep: 'a' } }),
          },
          {
            name: 'B',
            handler: (args: Record<string, unknown>) => ({ ...text(`B:${String(args.v)}`), _meta: { fromB: true } }),
          },
        ],
      });
      const result = await kit.call('A', {});
      expect(textOf(result)).toBe('B:1');
      expect(Object.keys(result._meta ?? {}).sort()).toEqual([MetaKey.CHAIN, 'fromB']);
      await kit.close();
    }
  });

  it("follows a directive on a tool's own error result (error recovery)", async () => {
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [
        { name: 'query', handler: () => withNext(text('A'), 'db_query') },
        {
          name: 'db_query',
          handler: () => withNext({ ...text('auth expired'), isError: true }, 'refresh_credentials'),
        },
        { name: 'refresh_credentials', handler: () => text('refreshed') },
      ],
    });
    const result = await kit.call('query', {});
    expect(textOf(result)).toBe('refreshed');
    expect(stepsOf(result)).toEqual(['db_query:error', 'refresh_credentials:ok']);
    await kit.close();
  });

  it('leaves the directive of a tool not selected by `tools` to the client', async () => {
    const kit = await createTestKit({
      plugins: [chaining({ tools: ['step0'] })],
      tools: stepTools(3),
    });
    const result = await kit.call('step0', { n: 0 });
    // step0 may start the chain; step1 may not continue it.
    expect(textOf(result)).toBe('step1:1');
    expect(stepsOf(result)).toEqual(['step1:ok']);
    expect(result._meta?.[MetaKey.NEXT_TOOL]).toEqual({ tool: 'step2', arguments: { n: 2 } });
    const direct = await kit.call('step1', { n: 1 });
    expect(chainOf(direct)).toBeUndefined();
    expect(direct._meta?.[MetaKey.NEXT_TOOL]).toEqual({ tool: 'step2', arguments: { n: 2 } });
    await kit.close();
  });

  it("lets a local tool's policy override the patterns", async () => {
    const kit = await createTestKit({
      plugins: [chaining({ tools: ['!*'] })],
      tools: [
        { name: 'A', policy: { chaining: { follow: true } }, handler: () => withNext(text('A'), 'B') },
        { name: 'B', policy: { chaining: { target: false } }, handler: () => text('B') },
        { name: 'C', handler: () => withNext(text('C'), 'A') },
      ],
    });
    expect(errorOf(await kit.call('A', {}))?.code).toBe(ChainingErrorCode.TARGET_DENIED);
    expect((await kit.call('C', {}))._meta?.[MetaKey.NEXT_TOOL]).toEqual({ tool: 'A', arguments: {} });
    await kit.close();
  });

  it('accepts the next() fragment spread into a result', async () => {
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [
        { name: 'A', handler: () => ({ ...text('A'), ...next('B', { to: 'b' }) }) },
        { name: 'B', handler: (a: Record<string, unknown>) => text(`B:${String(a.to)}`) },
      ],
    });
    expect(textOf(await kit.call('A', {}))).toBe('B:b');
    await kit.close();
  });
});

describe('chained calls go through the whole pipeline', () => {
  it('shows each chained call to preCall and settled, as a nested call of the origin', async () => {
    const seen: string[] = [];
    const outcomes: string[] = [];
    const observer: Plugin = definePlugin({
      name: 'observer',
      version: '0.0.0',
      apply({ hooks }) {
        hooks.preCall.tap(
          'observer',
          (ctx) => void seen.push(`${ctx.tool.name}<-${ctx.parent?.tool.name ?? 'client'}`),
        );
        hooks.settled.tap(
          'observer',
          (ctx: CallContext, o: Outcome) => void outcomes.push(`${ctx.tool.name}:${o.status}`),
        );
      },
    });
    const kit = await createTestKit({ plugins: [observer, chaining()], tools: stepTools(2) });
    await kit.call('step0', { n: 0 });
    expect(seen).toEqual(['step0<-client', 'step1<-step0', 'step2<-step0']);
    expect(outcomes).toEqual(['step1:ok', 'step2:ok', 'step0:ok']);
    await kit.close();
  });

  it('stops the chain when the caller cancels', async () => {
    const controller = new AbortController();
    const runs = new Runs();
    const kit = await createTestKit({
      plugins: [chaining()],
      tools: [
        { name: 'A', handler: () => withNext(text('A'), 'B') },
        { name: 'B', handler: () => (runs.hit('B'), controller.abort(), withNext(text('B'), 'C')) },
        { name: 'C', handler: () => (runs.hit('C'), text('C')) },
      ],
    });
    const failure = await kit.server.call('A', {}, { signal: controller.signal }).catch((e: unknown) => e);
    expect(SluiceError.is(failure) && failure.code).toBe(CoreErrorCode.CANCELLED);
    expect([runs.of('B'), runs.of('C')]).toEqual([1, 0]);
    await kit.close();
  });

  it('logs each step and each stop', async () => {
    const kit = await createTestKit({ plugins: [chaining({ maxDepth: 1 })], tools: stepTools(2) });
    await kit.call('step0', { n: 0 });
    expect(kit.logs.events('chain.step').map((r) => [r.tool, r.outcome])).toEqual([
      ['step1', 'ok'],
      ['step2', 'refused'],
    ]);
    expect(kit.logs.events('chain.stopped')[0]).toMatchObject({
      origin: 'step0',
      code: ChainingErrorCode.TOO_DEEP,
      tool: 'step2',
    });
    await kit.close();
  });
});

describe('modes', () => {
  it('in audit mode logs what it would do and runs nothing', async () => {
    const runs = new Runs();
    const kit = await createTestKit({ plugins: [chaining({ mode: 'audit' })], tools: stepTools(1, runs) });
    const result = await kit.call('step0', { n: 0 });
    expect(textOf(result)).toBe('step0:0');
    expect(result._meta?.[MetaKey.NEXT_TOOL]).toEqual({ tool: 'step1', arguments: { n: 1 } });
    expect(runs.of('step1')).toBe(0);
    expect(kit.logs.events('chain.audit')[0]).toMatchObject({
      origin: 'step0',
      tool: 'step1',
      verdict: 'would_follow',
    });
    await kit.close();
  });

  it('in audit mode reports the refusal a chain would meet', async () => {
    const kit = await createTestKit({
      plugins: [chaining({ mode: 'audit' })],
      tools: [{ name: 'A', handler: () => withNext(text('A'), 'nowhere') }],
    });
    await kit.call('A', {});
    expect(kit.logs.events('chain.audit')[0]).toMatchObject({ verdict: ChainingErrorCode.UNKNOWN_TOOL });
    await kit.close();
  });

  it('when off, taps nothing', async () => {
    const kit = await createTestKit({ plugins: [chaining({ mode: 'off' })], tools: stepTools(1) });
    expect(kit.server.plugins).toEqual([]);
    expect((await kit.call('step0', { n: 0 }))._meta?.[MetaKey.NEXT_TOOL]).toBeDefined();
    await kit.close();
  });
});
