import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin, readRefusal, refusal } from '@sluice/core';
import { toolErrorText } from '@sluice/core/internal';
import { createTestKit, errorOf } from '../../testing/src/index.js';

describe('refusal()', () => {
  it('renders the <tool_error> block with code, message and suggestion, and a machine-readable copy', () => {
    const result = refusal({
      code: 'SERVER_BUSY',
      message: 'Busy (5 active).',
      suggestion: 'Retry later.',
      retryAfterMs: 250,
      details: { active: 5 },
    });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: '<tool_error>\n  <error_code>SERVER_BUSY</error_code>\n  <message>Busy (5 active).</message>\n  <suggestion>Retry later.</suggestion>\n</tool_error>',
      },
    ]);
    expect(readRefusal(result)).toEqual({
      code: 'SERVER_BUSY',
      message: 'Busy (5 active).',
      retryAfterMs: 250,
      active: 5,
    });
  });

  it('escapes what could close or open an element, and keeps arrows readable', () => {
    expect(toolErrorText('X', 'a -> b & <script>')).toContain('<message>a -> b &amp; &lt;script></message>');
  });

  it('does not let details overwrite the code or the message', () => {
    const result = refusal({ code: 'REAL', message: 'real', details: { code: 'FAKE', message: 'fake' } });
    expect(readRefusal(result)).toMatchObject({ code: 'REAL', message: 'real' });
  });

  it('reads nothing from a result that is not a refusal', () => {
    expect(readRefusal({ content: [] })).toBeUndefined();
    expect(readRefusal({ content: [], _meta: { 'dev.sluice/error': { code: 7 } } })).toBeUndefined();
  });
});

describe('who refused', () => {
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  const busy = () => refusal({ code: 'SHARED_CODE', message: 'no' });

  it('names the plugin whose preCall tap, postCall tap or executor wrapper returned the refusal', async () => {
    const gatekeeper = definePlugin({
      name: 'gatekeeper',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.preCall.tap('gatekeeper', (ctx) => (ctx.tool.name === 'gated' ? busy() : undefined)),
    });
    const wrapper = definePlugin({
      name: 'wrapper',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.execute.tap('wrapper', (next, tool) => (tool.name === 'wrapped' ? () => Promise.resolve(busy()) : next)),
    });
    const rewriter = definePlugin({
      name: 'rewriter',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.postCall.tapPromise('rewriter', async (result, ctx) => (ctx.tool.name === 'rewritten' ? busy() : result)),
    });
    const kit = await createTestKit({
      plugins: [gatekeeper, wrapper, rewriter],
      tools: ['gated', 'wrapped', 'rewritten', 'plain'].map((name) => ({ name, handler: () => text(name) })),
    });
    expect(errorOf(await kit.call('gated'))).toMatchObject({ code: 'SHARED_CODE', plugin: 'gatekeeper' });
    expect(errorOf(await kit.call('wrapped'))).toMatchObject({ code: 'SHARED_CODE', plugin: 'wrapper' });
    expect(errorOf(await kit.call('rewritten'))).toMatchObject({ code: 'SHARED_CODE', plugin: 'rewriter' });
    expect(errorOf(await kit.call('plain'))).toBeUndefined();
    await kit.close();
  });

  it("keeps the inner plugin's name on a refusal that passes through an outer wrapper, and names the core for its own", async () => {
    const wrap = (name: string, refuses: boolean) =>
      definePlugin({
        name,
        version: '1.0.0',
        apply: ({ hooks }) =>
          hooks.execute.tap({ name, stage: refuses ? 0 : 10 }, (next) =>
            refuses ? () => Promise.resolve(busy()) : (ctx) => next(ctx),
          ),
      });
    const kit = await createTestKit({
      plugins: [wrap('outer', false), wrap('inner', true)],
      tools: [{ name: 'add', inputSchema: z.object({ a: z.number() }), handler: () => text('sum') }],
    });
    expect(errorOf(await kit.call('add', { a: 1 }))).toMatchObject({ plugin: 'inner' });
    expect(errorOf(await kit.call('add', { a: 'one' }))).toMatchObject({ code: 'INVALID_ARGUMENTS', plugin: 'core' });
    await kit.close();
  });

  it('leaves a tool error, which is not a refusal, unattributed', async () => {
    const pass = definePlugin({
      name: 'pass',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.execute.tap('pass', (next) => (ctx) => next(ctx)),
    });
    const kit = await createTestKit({
      plugins: [pass],
      tools: [
        {
          name: 'breaks',
          handler: () => {
            throw new Error('disk full');
          },
        },
      ],
    });
    const meta = errorOf(await kit.call('breaks'));
    expect(meta?.code).toBe('TOOL_ERROR');
    expect(meta?.plugin).toBeUndefined();
    await kit.close();
  });
});
