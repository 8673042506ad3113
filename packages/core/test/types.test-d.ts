// Type tests for the public API: checked by `tsc` (pnpm typecheck), not run.
import { expectTypeOf } from 'vitest';
import { z } from 'zod';
import { createServer, definePlugin, refusal } from '@sluice/core';
import type {
  CallContext,
  CoreHooks,
  CallToolResult,
  Executor,
  ImportBatch,
  Outcome,
  Plugin,
  PluginApi,
  PluginHooks,
  SluiceTool,
  Tool,
  ToolPolicy,
  RequestContext,
} from '@sluice/core';

declare module '@sluice/core' {
  interface ToolPolicy {
    typeTest?: { level: number };
  }
}

// A plugin factory returns a Plugin; definePlugin keeps the literal's type.
const plugin = definePlugin({
  name: 'typed',
  version: '1.0.0',
  apply: (api: PluginApi) => {
    expectTypeOf(api).toEqualTypeOf<PluginApi>();
  },
});
expectTypeOf(plugin).toExtend<Plugin>();
expectTypeOf(plugin.name).toEqualTypeOf<string>();

// Tap signatures.
definePlugin({
  name: 'taps',
  version: '1.0.0',
  apply: ({ hooks }) => {
    hooks.import.tap('taps', (batch) => {
      expectTypeOf(batch).toEqualTypeOf<ImportBatch>();
      return batch;
    });
    hooks.listTools.tap('taps', (tools) => {
      expectTypeOf(tools).toEqualTypeOf<Tool[]>();
      return tools;
    });
    hooks.preCall.tap('taps', (ctx) => {
      expectTypeOf(ctx).toEqualTypeOf<CallContext>();
      return ctx.arguments.x === 1 ? refusal({ code: 'X', message: 'x' }) : undefined;
    });
    hooks.preCall.tapPromise('taps', async () => undefined);
    // A preCall or postCall tap answers at once, or with a promise on the calls where it must wait.
    hooks.preCall.tap('taps', (ctx) => (ctx.arguments.wait === true ? Promise.resolve(undefined) : undefined));
    hooks.postCall.tap('taps', (result, ctx) => (ctx.arguments.wait === true ? Promise.resolve(result) : result));
    // @ts-expect-error a listTools tap answers at once: it runs inside tools/list, which waits for nothing
    hooks.listTools.tap('taps', (tools) => Promise.resolve(tools));
    hooks.execute.tap('taps', (next, tool) => {
      expectTypeOf(next).toEqualTypeOf<Executor>();
      expectTypeOf(tool).toEqualTypeOf<SluiceTool>();
      return next;
    });
    hooks.postCall.tap('taps', (result, ctx) => {
      expectTypeOf(result).toEqualTypeOf<CallToolResult>();
      expectTypeOf(ctx).toEqualTypeOf<CallContext>();
      return result;
    });
    hooks.settled.tap('taps', (_ctx, outcome) => {
      expectTypeOf(outcome).toEqualTypeOf<Outcome>();
    });
    // @ts-expect-error a preCall tap must return a result or undefined
    hooks.preCall.tap('taps', () => 'not a result');
    // @ts-expect-error an execute tap must return an executor
    hooks.execute.tap('taps', () => 42);
  },
});

// ToolPolicy augmentation, and handler arguments inferred from a zod schema.
const server = createServer({ name: 's', version: '1' });
server.tool({
  name: 'typed',
  inputSchema: z.object({ id: z.string(), count: z.number().optional() }),
  policy: { typeTest: { level: 2 } },
  handler: (args) => {
    expectTypeOf(args).toEqualTypeOf<{ id: string; count?: number | undefined }>();
    return { content: [] };
  },
});
expectTypeOf<ToolPolicy['typeTest']>().toEqualTypeOf<{ level: number } | undefined>();
server.tool({
  name: 'bad-policy',
  // @ts-expect-error policy fields are typed by their augmentation
  policy: { typeTest: { level: 'high' } },
  handler: () => ({ content: [] }),
});

// The plugin view of the hooks is read back from the core's one table: tapPromise only on async hooks.
expectTypeOf<PluginHooks['preCall']>().toHaveProperty('tapPromise');
expectTypeOf<PluginHooks['postCall']>().toHaveProperty('tapPromise');
expectTypeOf<PluginHooks['import']>().toHaveProperty('tapPromise');
expectTypeOf<PluginHooks['execute']>().not.toHaveProperty('tapPromise');
expectTypeOf<PluginHooks['settled']>().not.toHaveProperty('tapPromise');
expectTypeOf<PluginHooks['listTools']>().not.toHaveProperty('tapPromise');
expectTypeOf<Parameters<PluginHooks['settled']['tap']>[1]>().parameters.toEqualTypeOf<[CallContext, Outcome]>();
// A plugin taps the core's hooks, and the adapters kept for plugins written before the one request path.
expectTypeOf<keyof PluginHooks>().toEqualTypeOf<
  keyof CoreHooks | 'preCall' | 'postCall' | 'featureResult' | 'featureAccess'
>();
expectTypeOf<PluginHooks['featureAccess']>().not.toHaveProperty('tapPromise');
expectTypeOf<Parameters<PluginHooks['request']['tap']>[1]>().parameters.toEqualTypeOf<[RequestContext]>();
