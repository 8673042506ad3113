import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CoreErrorCode, SluiceError, Stage, definePlugin, refusal } from '@sluice/core';
import type { CallContext, Executor, Outcome, Plugin, PluginApi } from '@sluice/core';

type CallToolResultLike = Parameters<typeof textOf>[0];
import { createTestKit, errorOf, textOf } from '../../testing/src/index.js';

const echo = {
  name: 'echo',
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }: { text: string }) => ({ content: [{ type: 'text' as const, text }] }),
};

function plugin(name: string, apply: Plugin['apply'], mode?: Plugin['mode']): Plugin {
  return definePlugin({ name, version: '1.0.0', apply, ...(mode ? { mode } : {}) });
}

describe('the call pipeline', () => {
  it('stops at the first preCall tap that returns a result, and skips the handler', async () => {
    const seen: string[] = [];
    let handled = 0;
    const kit = await createTestKit({
      plugins: [
        plugin('a', ({ hooks }) =>
          hooks.preCall.tap({ name: 'a', stage: Stage.LOOP }, () => {
            seen.push('a');
            return refusal({ code: 'NOPE', message: 'refused by a' });
          }),
        ),
        plugin('b', ({ hooks }) => hooks.preCall.tap({ name: 'b', stage: Stage.RISK }, () => void seen.push('b'))),
      ],
      tools: [{ ...echo, handler: (args: { text: string }) => (handled++, echo.handler(args)) }],
    });
    const result = await kit.call('echo', { text: 'hi' });
    expect(result.isError).toBe(true);
    expect(errorOf(result)?.code).toBe('NOPE');
    expect(textOf(result)).toContain('<error_code>NOPE</error_code>');
    expect(seen).toEqual(['a']);
    expect(handled).toBe(0);
    await kit.close();
  });

  it('runs preCall taps by stage, not by registration order', async () => {
    const seen: string[] = [];
    const kit = await createTestKit({
      plugins: [
        plugin('late', ({ hooks }) =>
          hooks.preCall.tap({ name: 'late', stage: Stage.APPROVAL }, () => void seen.push('late')),
        ),
        plugin('early', ({ hooks }) =>
          hooks.preCall.tap({ name: 'early', stage: Stage.FILTER }, () => void seen.push('early')),
        ),
        plugin('ordered', ({ hooks }) =>
          hooks.preCall.tap(
            { name: 'ordered', stage: Stage.APPROVAL, before: 'late' },
            () => void seen.push('ordered'),
          ),
        ),
      ],
      tools: [echo],
    });
    await kit.call('echo', { text: 'x' });
    expect(seen).toEqual(['early', 'ordered', 'late']);
    await kit.close();
  });

  it('threads the result through postCall taps in stage order', async () => {
    const suffix = (s: string) => (r: { content: { type: string; text?: string }[] }) => ({
      ...r,
      content: [{ type: 'text' as const, text: `${(r.content[0] as { text: string }).text}${s}` }],
    });
    const kit = await createTestKit({
      plugins: [
        plugin('two', ({ hooks }) => hooks.postCall.tap({ name: 'two', stage: Stage.CHAIN }, suffix('-2'))),
        plugin('one', ({ hooks }) =>
          hooks.postCall.tapPromise({ name: 'one', stage: Stage.TRANSFORM }, async (r) => suffix('-1')(r)),
        ),
      ],
      tools: [echo],
    });
    expect(textOf(await kit.call('echo', { text: 'v' }))).toBe('v-1-2');
    await kit.close();
  });

  it('runs sync and promise preCall taps in stage order, waiting for each promise before the next tap', async () => {
    const seen: string[] = [];
    const kit = await createTestKit({
      plugins: [
        plugin('first', ({ hooks }) =>
          hooks.preCall.tap({ name: 'first', stage: Stage.FILTER }, () => void seen.push('1')),
        ),
        plugin('slow', ({ hooks }) =>
          hooks.preCall.tapPromise({ name: 'slow', stage: Stage.LOOP }, async () => {
            await new Promise((resolve) => setTimeout(resolve, 5));
            seen.push('2');
            return undefined;
          }),
        ),
        plugin('third', ({ hooks }) =>
          hooks.preCall.tap({ name: 'third', stage: Stage.RISK }, () => void seen.push('3')),
        ),
        plugin('refuses', ({ hooks }) =>
          hooks.preCall.tapPromise({ name: 'refuses', stage: Stage.APPROVAL }, () => {
            seen.push('4');
            return Promise.resolve(refusal({ code: 'LATE_NO', message: 'refused after a wait' }));
          }),
        ),
        plugin('never', ({ hooks }) =>
          hooks.preCall.tap({ name: 'never', stage: Stage.DEFAULT }, () => void seen.push('5')),
        ),
      ],
      tools: [echo],
    });
    const result = await kit.call('echo', { text: 'hi' });
    expect(errorOf(result)).toMatchObject({ code: 'LATE_NO', plugin: 'refuses' });
    expect(seen).toEqual(['1', '2', '3', '4']);
    await kit.close();
  });

  it('waits for a promise that a sync preCall tap returns, and goes on to the next tap when it settles to nothing', async () => {
    const seen: string[] = [];
    const kit = await createTestKit({
      plugins: [
        // A plain-JavaScript plugin's slip: an async function tapped with tap(). Its guard must still run in full.
        plugin('slip', ({ hooks }) =>
          hooks.preCall.tap({ name: 'slip', stage: Stage.FILTER }, (async () => {
            await Promise.resolve();
            seen.push('slip');
          }) as unknown as () => undefined),
        ),
        plugin('guard', ({ hooks }) =>
          hooks.preCall.tap({ name: 'guard', stage: Stage.RISK }, () => {
            seen.push('guard');
            return refusal({ code: 'GUARDED', message: 'the later guard still runs' });
          }),
        ),
      ],
      tools: [echo],
    });
    expect(errorOf(await kit.call('echo', { text: 'hi' }))?.code).toBe('GUARDED');
    expect(seen).toEqual(['slip', 'guard']);
    await kit.close();
  });

  it('names the plugin of a sync tap whose promise refuses or rejects', async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('later', ({ hooks }) =>
          hooks.preCall.tap({ name: 'later', stage: Stage.RISK }, (ctx) => {
            if (ctx.arguments.text === 'answer') return undefined;
            return ctx.arguments.text === 'refuse'
              ? Promise.resolve(refusal({ code: 'LATER_NO', message: 'refused after a wait' }))
              : Promise.reject(new Error('broke while waiting'));
          }),
        ),
      ],
      tools: [echo],
    });
    expect(errorOf(await kit.call('echo', { text: 'refuse' }))).toMatchObject({ code: 'LATER_NO', plugin: 'later' });
    const failure = await kit.server.call('echo', { text: 'reject' }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: CoreErrorCode.PLUGIN_FAILED, plugin: 'later', hook: 'preCall' });
    expect(textOf(await kit.call('echo', { text: 'answer' }))).toBe('answer');
    await kit.close();
  });

  it('threads a result through a sync postCall tap after a promise one, and keeps it when a tap returns nothing', async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('waits', ({ hooks }) =>
          hooks.postCall.tapPromise({ name: 'waits', stage: Stage.TRANSFORM }, async (r) => {
            await new Promise((resolve) => setTimeout(resolve, 2));
            return { ...r, content: [{ type: 'text' as const, text: `${textOf(r)}-waited` }] };
          }),
        ),
        plugin('looks', ({ hooks }) =>
          hooks.postCall.tap(
            { name: 'looks', stage: Stage.CHAIN },
            (() => undefined) as unknown as (r: CallToolResultLike) => CallToolResultLike,
          ),
        ),
        plugin('last', ({ hooks }) =>
          hooks.postCall.tap({ name: 'last', stage: Stage.LAST }, (r) => ({
            ...r,
            content: [{ type: 'text' as const, text: `${textOf(r)}-last` }],
          })),
        ),
      ],
      tools: [echo],
    });
    expect(textOf(await kit.call('echo', { text: 'v' }))).toBe('v-waited-last');
    await kit.close();
  });

  it('names the plugin when a promise preCall tap rejects', async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('rejects', ({ hooks }) =>
          hooks.preCall.tapPromise({ name: 'rejects', stage: Stage.RISK }, () => Promise.reject(new Error('boom'))),
        ),
      ],
      tools: [echo],
    });
    const failure = await kit.server.call('echo', { text: 'hi' }).catch((e: unknown) => e);
    expect(SluiceError.is(failure)).toBe(true);
    expect(failure).toMatchObject({ code: CoreErrorCode.PLUGIN_FAILED, plugin: 'rejects', hook: 'preCall' });
    await expect(kit.call('echo', { text: 'hi' })).rejects.toThrow(/plugin "rejects" \(preCall\)/);
    await kit.close();
  });

  it('composes execute wrappers once per tool, the highest stage outermost', async () => {
    const order: string[] = [];
    let compositions = 0;
    const wrap = (name: string) => (next: Executor) => {
      compositions++;
      return async (ctx: CallContext) => {
        order.push(`${name}:in`);
        const r = await next(ctx);
        order.push(`${name}:out`);
        return r;
      };
    };
    const kit = await createTestKit({
      plugins: [
        plugin('outer', ({ hooks }) => hooks.execute.tap({ name: 'outer', stage: Stage.THROTTLE }, wrap('outer'))),
        plugin('inner', ({ hooks }) => hooks.execute.tap({ name: 'inner', stage: Stage.DEFAULT }, wrap('inner'))),
      ],
      tools: [echo],
    });
    await kit.call('echo', { text: '1' });
    await kit.call('echo', { text: '2' });
    expect(compositions).toBe(2);
    expect(order.slice(0, 4)).toEqual(['outer:in', 'inner:in', 'inner:out', 'outer:out']);
    await kit.close();
  });

  it("keeps the inner plugin's name on a refusal that outer wrappers pass through unchanged or rewrap", async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('inner', ({ hooks }) =>
          hooks.execute.tap(
            { name: 'inner', stage: Stage.DEFAULT },
            () => () => Promise.resolve(refusal({ code: 'INNER_NO', message: 'refused inside' })),
          ),
        ),
        // Looks at the call and hands the inner promise back as it is.
        plugin('looks', ({ hooks }) =>
          hooks.execute.tap({ name: 'looks', stage: Stage.THROTTLE }, (next) => (ctx) => next(ctx)),
        ),
        // Waits on the inner promise and returns its result: a promise of its own.
        plugin('rewraps', ({ hooks }) =>
          hooks.execute.tap({ name: 'rewraps', stage: Stage.TRANSFORM }, (next) => async (ctx) => await next(ctx)),
        ),
        plugin('outer', ({ hooks }) =>
          hooks.execute.tap({ name: 'outer', stage: Stage.LAST }, (next) => (ctx) => next(ctx)),
        ),
      ],
      tools: [echo],
    });
    expect(errorOf(await kit.call('echo', { text: 'hi' }))).toMatchObject({ code: 'INNER_NO', plugin: 'inner' });
    await kit.close();
  });

  it("leaves the tool's own refusal-shaped result unattributed when a wrapper only passes it on", async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('looks', ({ hooks }) =>
          hooks.execute.tap({ name: 'looks', stage: Stage.THROTTLE }, (next) => (ctx) => next(ctx)),
        ),
      ],
      tools: [{ ...echo, handler: () => refusal({ code: 'TOOL_SAYS_NO', message: 'the tool refused' }) }],
    });
    const refused = errorOf(await kit.call('echo', { text: 'hi' }));
    expect(refused?.code).toBe('TOOL_SAYS_NO');
    expect(refused?.plugin).toBeUndefined();
    await kit.close();
  });

  it('names the plugin whose pass-through wrapper throws before calling next, and the inner one for its rejection', async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('fails', ({ hooks }) =>
          hooks.execute.tap(
            { name: 'fails', stage: Stage.DEFAULT },
            () => () => Promise.reject(new Error('inner broke')),
          ),
        ),
        plugin('looks', ({ hooks }) =>
          hooks.execute.tap({ name: 'looks', stage: Stage.THROTTLE }, (next) => (ctx) => {
            if (ctx.arguments.text === 'throw') throw new Error('outer broke');
            return next(ctx);
          }),
        ),
      ],
      tools: [echo],
    });
    const inner = await kit.server.call('echo', { text: 'hi' }).catch((e: unknown) => e);
    expect(inner).toMatchObject({ code: CoreErrorCode.PLUGIN_FAILED, plugin: 'fails', hook: 'execute' });
    const outer = await kit.server.call('echo', { text: 'throw' }).catch((e: unknown) => e);
    expect(outer).toMatchObject({ code: CoreErrorCode.PLUGIN_FAILED, plugin: 'looks', hook: 'execute' });
    await kit.close();
  });

  it('leaves a tool untouched when an execute tap returns next unchanged', async () => {
    let wrappedCalls = 0;
    const kit = await createTestKit({
      plugins: [
        plugin('picky', ({ hooks }) =>
          hooks.execute.tap('picky', (next, tool) =>
            tool.name === 'guarded' ? async (ctx) => (wrappedCalls++, next(ctx)) : next,
          ),
        ),
      ],
      tools: [echo, { ...echo, name: 'guarded' }],
    });
    await kit.call('echo', { text: 'a' });
    await kit.call('guarded', { text: 'b' });
    expect(wrappedCalls).toBe(1);
    await kit.close();
  });

  it('reports every call to settled: success, refusal and failure', async () => {
    const outcomes: Outcome['status'][] = [];
    const kit = await createTestKit({
      plugins: [
        plugin('gate', ({ hooks }) =>
          hooks.preCall.tap('gate', (ctx) =>
            ctx.arguments.text === 'no' ? refusal({ code: 'GATE', message: 'closed' }) : undefined,
          ),
        ),
        plugin('boom', ({ hooks }) =>
          hooks.postCall.tap('boom', (r, ctx) => {
            if (ctx.arguments.text === 'crash') throw new Error('postCall bug');
            return r;
          }),
        ),
        plugin('watch', ({ hooks }) =>
          hooks.settled.tap({ name: 'watch', stage: Stage.LAST }, (_ctx, o) => void outcomes.push(o.status)),
        ),
      ],
      tools: [echo],
    });
    await kit.call('echo', { text: 'yes' });
    await kit.call('echo', { text: 'no' });
    await expect(kit.call('echo', { text: 'crash' })).rejects.toMatchObject({ code: -32603 });
    expect(outcomes).toEqual(['ok', 'refused', 'error']);
    await kit.close();
  });

  it('names the plugin and the hook when a tap throws, and logs it', async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('buggy', ({ hooks }) =>
          hooks.preCall.tap('buggy', () => {
            throw new TypeError('oops');
          }),
        ),
      ],
      tools: [echo],
    });
    const failure = await kit.server.call('echo', { text: 'x' }).catch((e: unknown) => e);
    expect(SluiceError.is(failure)).toBe(true);
    expect(failure).toMatchObject({ code: CoreErrorCode.PLUGIN_FAILED, plugin: 'buggy', hook: 'preCall' });
    await expect(kit.call('echo', { text: 'x' })).rejects.toThrow(/plugin "buggy" \(preCall\)/);
    expect(kit.logs.events('plugin.failed').map((r) => r.plugin)).toEqual(['buggy', 'buggy']);
    await kit.close();
  });

  it('a settled observer that throws changes nothing for the caller', async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('noisy', ({ hooks }) =>
          hooks.settled.tap('noisy', () => {
            throw new Error('observer bug');
          }),
        ),
      ],
      tools: [echo],
    });
    expect(textOf(await kit.call('echo', { text: 'fine' }))).toBe('fine');
    expect(kit.logs.events('plugin.failed')[0]).toMatchObject({ hook: 'settled' });
    await kit.close();
  });

  it('runs a tap that names its tools only on calls of those tools, and times no call that nothing observes', async () => {
    const seen: string[] = [];
    const onlyGuarded = { tools: (tool: { name: string }) => tool.name === 'guarded' };
    const kit = await createTestKit({
      plugins: [
        plugin('picky', ({ hooks }) => {
          hooks.preCall.tap({ name: 'picky', ...onlyGuarded }, (ctx) => void seen.push(`pre:${ctx.tool.name}`));
          hooks.postCall.tap({ name: 'picky', ...onlyGuarded }, (result, ctx) => {
            seen.push(`post:${ctx.tool.name}`);
            return result;
          });
          hooks.settled.tap(
            { name: 'picky', ...onlyGuarded },
            (ctx, o) => void seen.push(`settled:${ctx.tool.name}:${o.status}`),
          );
        }),
        plugin('everywhere', ({ hooks }) =>
          hooks.preCall.tap({ name: 'everywhere', stage: Stage.LAST }, (ctx) => void seen.push(`all:${ctx.tool.name}`)),
        ),
      ],
      tools: [echo, { ...echo, name: 'guarded' }],
    });
    await kit.call('echo', { text: 'a' });
    expect(seen).toEqual(['all:echo']);
    seen.length = 0;
    await kit.call('guarded', { text: 'b' });
    expect(seen).toEqual(['pre:guarded', 'all:guarded', 'post:guarded', 'settled:guarded:ok']);
    await kit.close();
  });

  it('asks a tools filter once per tool, and names the plugin when the filter throws', async () => {
    let asked = 0;
    const kit = await createTestKit({
      plugins: [
        plugin('counts', ({ hooks }) =>
          hooks.settled.tap({ name: 'counts', tools: () => (asked++, true) }, () => undefined),
        ),
      ],
      tools: [echo],
    });
    for (let i = 0; i < 3; i++) await kit.call('echo', { text: `${i}` });
    expect(asked).toBe(1);
    await kit.close();
    const broken = plugin('broken', ({ hooks }) =>
      hooks.preCall.tap(
        {
          name: 'broken',
          tools: () => {
            throw new Error('filter bug');
          },
        },
        () => undefined,
      ),
    );
    await expect(createTestKit({ plugins: [broken], tools: [echo] })).rejects.toMatchObject({
      plugin: 'broken',
      hook: 'preCall',
    });
  });

  it('tells every settled observer how a call ended, even after one of them threw', async () => {
    const seen: string[] = [];
    const kit = await createTestKit({
      plugins: [
        plugin('noisy', ({ hooks }) =>
          hooks.settled.tap({ name: 'noisy', stage: Stage.FIRST }, () => {
            throw new Error('observer bug');
          }),
        ),
        plugin('quiet', ({ hooks }) =>
          hooks.settled.tap({ name: 'quiet', stage: Stage.LAST }, (_ctx, o) => void seen.push(o.status)),
        ),
      ],
      tools: [echo],
    });
    expect(textOf(await kit.call('echo', { text: 'fine' }))).toBe('fine');
    expect(seen).toEqual(['ok']);
    expect(kit.logs.events('plugin.failed')).toMatchObject([{ hook: 'settled', plugin: 'noisy' }]);
    await kit.close();
  });

  it('in audit mode logs a preCall refusal and lets the call through', async () => {
    const kit = await createTestKit({
      plugins: [
        plugin(
          'strict',
          ({ hooks }) => hooks.preCall.tap('strict', () => refusal({ code: 'STRICT', message: 'no' })),
          'audit',
        ),
      ],
      tools: [echo],
    });
    expect(textOf(await kit.call('echo', { text: 'through' }))).toBe('through');
    expect(kit.logs.events('audit.refusal')[0]).toMatchObject({ plugin: 'strict', code: 'STRICT' });
    await kit.close();
  });

  it('does not apply a plugin that is off', async () => {
    let applied = false;
    const kit = await createTestKit({ plugins: [plugin('idle', () => void (applied = true), 'off')], tools: [echo] });
    expect(applied).toBe(false);
    expect(kit.server.plugins).toEqual([]);
    await kit.close();
  });

  it('lets ctx.call run another tool through the whole pipeline, with the stack', async () => {
    const stacks: (readonly string[])[] = [];
    const kit = await createTestKit({
      plugins: [plugin('spy', ({ hooks }) => hooks.preCall.tap('spy', (ctx) => void stacks.push(ctx.stack)))],
      tools: [
        echo,
        { name: 'outer', handler: async (_args: unknown, ctx: CallContext) => ctx.call('echo', { text: 'nested' }) },
      ],
    });
    expect(textOf(await kit.call('outer'))).toBe('nested');
    expect(stacks).toEqual([[], ['outer']]);
    await kit.close();
  });
});

describe('what plugins can see', () => {
  it('looks up exposed tools and their input schemas through api.tools at call time', async () => {
    let seen: { names: string[]; required: unknown; missing: unknown } | undefined;
    const kit = await createTestKit({
      plugins: [
        plugin('catalog', ({ hooks, tools }) =>
          hooks.preCall.tap('catalog', () => {
            seen = { names: tools.names(), required: tools.inputOf('echo')?.json.required, missing: tools.get('nope') };
            return undefined;
          }),
        ),
      ],
      tools: [echo],
    });
    await kit.call('echo', { text: 'x' });
    expect(seen).toEqual({ names: ['echo'], required: ['text'], missing: undefined });
    await kit.close();
  });

  it("seeds a nested call's state from ctx.call options", async () => {
    const MARK = Symbol('mark');
    const marks: unknown[] = [];
    const kit = await createTestKit({
      plugins: [
        plugin('marks', ({ hooks }) => hooks.preCall.tap('marks', (ctx) => void marks.push(ctx.state.get(MARK)))),
      ],
      tools: [
        echo,
        {
          name: 'outer',
          handler: (_a: unknown, ctx: CallContext) => ctx.call('echo', { text: 'n' }, { state: [[MARK, 'step-1']] }),
        },
      ],
    });
    await kit.call('outer');
    expect(marks).toEqual([undefined, 'step-1']);
    await kit.close();
  });
});

describe('tool-list notifications from plugins', () => {
  it('tells connected clients when a plugin says the list changed', async () => {
    let notify: (() => void) | undefined;
    const kit = await createTestKit({
      plugins: [plugin('holder', ({ tools }) => void (notify = () => tools.notifyChanged()))],
      tools: [echo],
    });
    let changed = 0;
    kit.client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    notify!();
    await expect.poll(() => changed).toBe(1);
    await kit.close();
  });

  it('tells a client of named tools only when it may see one, asking a list filter that hides tools from everyone to leave them in', async () => {
    let tools: PluginApi['tools'] | undefined;
    const asked: boolean[] = [];
    const kit = await createTestKit({
      plugins: [
        plugin('holder', (api) => {
          tools = api.tools;
          // Hides `held` from every caller, except when asked who hears of a change; `secret` from every question.
          api.hooks.listTools.tap('holder', (list, ctx) => {
            const change = Symbol.for('dev.sluice/list-change') in ctx.headers;
            asked.push(change);
            return list.filter((tool) => tool.name !== 'secret' && (change || tool.name !== 'held'));
          });
        }),
      ],
      tools: [echo, { ...echo, name: 'held' }, { ...echo, name: 'secret' }],
    });
    let changed = 0;
    kit.client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    expect((await kit.listTools()).map((tool) => tool.name)).toEqual(['echo']);
    asked.length = 0;
    // Hidden from this client whatever the question, or not exposed at all: no one is told.
    tools!.notifyChanged(['secret', 'nope']);
    tools!.notifyChanged([]);
    expect(asked).toEqual([true]);
    // Held from everyone: the client may see it otherwise, and is told.
    tools!.notifyChanged(['held', 'held']);
    await expect.poll(() => changed).toBe(1);
    tools!.notifyChanged(['echo']);
    await expect.poll(() => changed).toBe(2);
    expect(() => tools!.notifyChanged('echo' as unknown as string[])).toThrow(/array of tool names/);
    expect(() => tools!.notifyChanged([1] as unknown as string[])).toThrow(/array of tool names/);
    // A round trip after every notification sent: one for `secret` would have arrived before it.
    await kit.listTools();
    expect(changed).toBe(2);
    await kit.close();
  });
});

describe('how settled tells refusals from tool errors', () => {
  it('reports a refusal built by an execute wrapper as refused with its code, and a handler that throws as ok', async () => {
    const outcomes: string[] = [];
    const kit = await createTestKit({
      plugins: [
        plugin('shedder', ({ hooks }) =>
          hooks.execute.tap({ name: 'shedder', stage: Stage.THROTTLE }, (next, tool) =>
            tool.name === 'busy' ? async () => refusal({ code: 'SERVER_BUSY', message: 'full' }) : next,
          ),
        ),
        plugin('watch', ({ hooks }) =>
          hooks.settled.tap(
            'watch',
            (_ctx, o) => void outcomes.push(o.status === 'refused' ? `refused:${o.code}` : o.status),
          ),
        ),
      ],
      tools: [
        { ...echo, name: 'busy' },
        {
          name: 'broken',
          handler: () => {
            throw new Error('bug');
          },
        },
      ],
    });
    await kit.call('busy', { text: 'x' });
    const broken = await kit.call('broken');
    expect(errorOf(broken)?.code).toBe(CoreErrorCode.TOOL_ERROR);
    expect(outcomes).toEqual(['refused:SERVER_BUSY', 'ok']);
    await kit.close();
  });
});

describe('a request tap that hides a tool', () => {
  /** The JSON-RPC error a call failed with, as the client read it. */
  const failure = (call: Promise<unknown>) =>
    call.then(
      () => {
        throw new Error('the call was answered, not refused');
      },
      (error: unknown) => {
        const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
        return { code, message, data };
      },
    );
  const unknownTool = (name: string) => ({
    code: -32602,
    message: `Unknown tool: "${name}"`,
    data: { code: CoreErrorCode.UNKNOWN_TOOL },
  });

  it('answers a call it refuses with NOT_FOUND as a call of a tool that does not exist, and settles it as refused', async () => {
    const outcomes: Outcome[] = [];
    const kit = await createTestKit({
      plugins: [
        plugin('hider', ({ hooks }) => {
          hooks.request.tap({ name: 'hider', kinds: ['tools/call'] }, () =>
            refusal({ code: CoreErrorCode.NOT_FOUND, message: 'not for you' }),
          );
          hooks.settled.tap('hider', (_ctx, outcome) => void outcomes.push(outcome));
        }),
      ],
      tools: [echo],
    });
    expect(await failure(kit.call('echo', { text: 'hi' }))).toEqual(unknownTool('echo'));
    expect(await failure(kit.call('missing', { text: 'hi' }))).toEqual(unknownTool('missing'));
    // Whoever observes calls still sees who hid it, and why.
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ status: 'refused', code: CoreErrorCode.NOT_FOUND });
    await kit.close();
  });

  it('fails a nested ctx.call() of a hidden tool as one of a missing tool', async () => {
    const kit = await createTestKit({
      plugins: [
        plugin('hider', ({ hooks }) =>
          hooks.preCall.tap('hider', (ctx) =>
            ctx.tool.name === 'echo' ? refusal({ code: CoreErrorCode.NOT_FOUND, message: 'not for you' }) : undefined,
          ),
        ),
      ],
      tools: [
        echo,
        {
          name: 'relay',
          inputSchema: z.object({ to: z.string() }),
          handler: async ({ to }: { to: string }, ctx: CallContext) => {
            const error = await ctx.call(to, { text: 'hi' }).then(
              () => undefined,
              (e: unknown) => e as SluiceError,
            );
            const seen = { code: error?.code, message: error?.message.replace(to, '<name>'), hook: error?.hook };
            return { content: [{ type: 'text' as const, text: JSON.stringify(seen) }] };
          },
        },
      ],
    });
    const hidden = textOf(await kit.call('relay', { to: 'echo' }));
    expect(JSON.parse(hidden)).toEqual({
      code: CoreErrorCode.UNKNOWN_TOOL,
      message: 'Unknown tool: "<name>"',
      hook: 'call',
    });
    expect(hidden).toBe(textOf(await kit.call('relay', { to: 'missing' })));
    await kit.close();
  });

  it('runs a tap with beforeArguments ahead of the argument check and of every other tap', async () => {
    const seen: string[] = [];
    let hide = true;
    const kit = await createTestKit({
      plugins: [
        plugin('first', ({ hooks }) =>
          hooks.preCall.tap({ name: 'first', stage: Stage.FIRST }, () => void seen.push('first')),
        ),
        plugin('hider', ({ hooks }) =>
          hooks.request.tap({ name: 'hider', stage: Stage.DEFAULT, beforeArguments: true }, () => {
            seen.push('hider');
            return hide ? refusal({ code: CoreErrorCode.NOT_FOUND, message: 'not for you' }) : undefined;
          }),
        ),
      ],
      tools: [echo],
    });
    // Hidden: arguments that break the schema tell nothing of it.
    expect(await failure(kit.call('echo', { text: 5 }))).toEqual(unknownTool('echo'));
    expect(seen).toEqual(['hider']);
    hide = false;
    seen.length = 0;
    expect(errorOf(await kit.call('echo', { text: 5 }))?.code).toBe(CoreErrorCode.INVALID_ARGUMENTS);
    expect(seen).toEqual(['hider']);
    seen.length = 0;
    expect(textOf(await kit.call('echo', { text: 'hi' }))).toBe('hi');
    expect(seen).toEqual(['hider', 'first']);
    await kit.close();
  });

  it('refuses beforeArguments on a hook whose taps run after the arguments anyway', async () => {
    const bad = plugin('bad', ({ hooks }) =>
      hooks.postCall.tap({ name: 'bad', beforeArguments: true }, (result) => result),
    );
    await expect(createTestKit({ plugins: [bad], tools: [echo] })).rejects.toMatchObject({
      code: CoreErrorCode.INVALID_TAP,
    });
  });

  it("checks a call's _meta before it looks the tool up: a malformed one is refused alike for every name", async () => {
    const kit = await createTestKit({ tools: [echo] });
    const meta = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, i]));
    const known = await failure(kit.call('echo', { text: 'hi' }, { meta }));
    expect(known).toMatchObject({ code: -32602, data: { code: CoreErrorCode.INVALID_PARAMS } });
    expect(await failure(kit.call('missing', { text: 'hi' }, { meta }))).toEqual(known);
    await kit.close();
  });
});
