import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import fc from 'fast-check';
import {
  CoreErrorCode,
  SluiceError,
  createServer,
  definePlugin,
  formatIssues,
  parseOptions,
  pluginOptions,
} from '@sluice/core';
import type { PluginApi } from '@sluice/core';
import { captureLogger } from '../../testing/src/index.js';

const quiet = () => captureLogger().logger;
const noop = () => {};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return SluiceError.is(error) ? error.code : `not a SluiceError: ${String(error)}`;
  }
  return undefined;
}

describe('plugin registration', () => {
  it('refuses two plugins with one name when the server is created', () => {
    const p = () => definePlugin({ name: 'twin', version: '1.0.0', apply: noop });
    expect(codeOf(() => createServer({ name: 's', version: '1', logger: quiet(), plugins: [p(), p()] }))).toBe(
      CoreErrorCode.DUPLICATE_PLUGIN,
    );
  });

  it('refuses an ordering reference to a plugin that is not registered', () => {
    const plugin = definePlugin({
      name: 'orderly',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.preCall.tap({ name: 'orderly', before: 'ghost' }, () => undefined),
    });
    const failure = (() => {
      try {
        createServer({ name: 's', version: '1', logger: quiet(), plugins: [plugin] });
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toMatchObject({ code: CoreErrorCode.UNKNOWN_PLUGIN_REFERENCE, plugin: 'orderly', hook: 'preCall' });
    expect((failure as Error).message).toContain('"ghost"');
  });

  it('accepts an ordering reference to a registered plugin', () => {
    const a = definePlugin({
      name: 'a',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.preCall.tap('a', () => undefined),
    });
    const b = definePlugin({
      name: 'b',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.preCall.tap({ name: 'b', before: 'a' }, () => undefined),
    });
    expect(codeOf(() => createServer({ name: 's', version: '1', logger: quiet(), plugins: [a, b] }))).toBeUndefined();
  });

  it('throws HOOKS_LOCKED when a plugin taps after the server started', () => {
    let captured: PluginApi | undefined;
    const sneaky = definePlugin({ name: 'sneaky', version: '1.0.0', apply: (api) => void (captured = api) });
    createServer({ name: 's', version: '1', logger: quiet(), plugins: [sneaky] });
    expect(codeOf(() => captured!.hooks.preCall.tap('sneaky', () => undefined))).toBe(CoreErrorCode.HOOKS_LOCKED);
  });

  it('rejects malformed plugins with INVALID_PLUGIN', () => {
    expect(codeOf(() => definePlugin({ name: '', version: '1', apply: noop }))).toBe(CoreErrorCode.INVALID_PLUGIN);
    expect(codeOf(() => definePlugin({ name: 'x', version: '', apply: noop }))).toBe(CoreErrorCode.INVALID_PLUGIN);
    expect(codeOf(() => definePlugin({ name: 'x', version: '1', mode: 'loud' as never, apply: noop }))).toBe(
      CoreErrorCode.INVALID_PLUGIN,
    );
    expect(codeOf(() => createServer({ name: 's', version: '1', logger: quiet(), plugins: [{} as never] }))).toBe(
      CoreErrorCode.INVALID_PLUGIN,
    );
  });

  it('attributes a throw inside apply() to the plugin', () => {
    const broken = definePlugin({
      name: 'broken',
      version: '1.0.0',
      apply: () => {
        throw new Error('bad wiring');
      },
    });
    expect(() => createServer({ name: 's', version: '1', logger: quiet(), plugins: [broken] })).toThrow(
      /Plugin "broken" failed in apply\(\): bad wiring/,
    );
  });

  it('rejects a tap without a name or with a stage that is not a number', () => {
    const unnamed = definePlugin({
      name: 'unnamed',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.settled.tap('', noop),
    });
    const staged = definePlugin({
      name: 'staged',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.settled.tap({ name: 'staged', stage: 'high' as never }, noop),
    });
    expect(codeOf(() => createServer({ name: 's', version: '1', logger: quiet(), plugins: [unnamed] }))).toBe(
      CoreErrorCode.INVALID_TAP,
    );
    expect(codeOf(() => createServer({ name: 's', version: '1', logger: quiet(), plugins: [staged] }))).toBe(
      CoreErrorCode.INVALID_TAP,
    );
  });

  it('rejects a tools filter that is not a function, or on a hook that does not run per call', () => {
    const notAFunction = definePlugin({
      name: 'odd',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.preCall.tap({ name: 'odd', tools: 'echo' as never }, () => undefined),
    });
    const wrongHook = definePlugin({
      name: 'lister',
      version: '1.0.0',
      apply: ({ hooks }) => hooks.listTools.tap({ name: 'lister', tools: () => true }, (tools) => tools),
    });
    for (const plugin of [notAFunction, wrongHook]) {
      expect(codeOf(() => createServer({ name: 's', version: '1', logger: quiet(), plugins: [plugin] }))).toBe(
        CoreErrorCode.INVALID_TAP,
      );
    }
    expect(() => createServer({ name: 's', version: '1', logger: quiet(), plugins: [wrongHook] })).toThrow(
      /only preCall, postCall and settled taps take it/,
    );
  });

  it('parseOptions names every bad field', () => {
    const Options = z.object({ maxActive: z.number().int().min(1), nested: z.object({ keys: z.array(z.string()) }) });
    expect(() => parseOptions('demo', Options, { maxActive: 0, nested: { keys: [1] } })).toThrow(
      /maxActive: .*nested\.keys\.0: /,
    );
  });

  it('parseOptions refuses a misspelt option of a plain z.object, naming it, instead of dropping it', () => {
    const Options = z.object({ file: z.string(), includeArguments: z.boolean().default(false) });
    expect(() => parseOptions('demo', Options, { file: 'a.jsonl', includeArgument: true })).toThrow(
      /Invalid options for plugin "demo": includeArgument: Unrecognized key \(the options are file, includeArguments\)/,
    );
    // A schema that asks for extra keys keeps them.
    expect(parseOptions('demo', Options.loose(), { file: 'a', extra: 1 })).toMatchObject({ extra: 1 });
  });

  it('parseOptions lets through every known key and refuses every unknown one (fuzzed)', () => {
    const Options = z.object({ file: z.string().optional(), limit: z.number().optional() });
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'toString')),
        fc.boolean(),
        (key, withKnown) => {
          const input: Record<string, unknown> = withKnown ? { file: 'a.jsonl', limit: 3 } : {};
          // As JSON.parse would: `__proto__` becomes an own key, not the prototype.
          Object.defineProperty(input, key, { value: 1, enumerable: true, configurable: true, writable: true });
          if (key === 'file') expect(() => parseOptions('demo', Options, input)).toThrow(/file: /);
          else if (key === 'limit') expect(parseOptions('demo', Options, input)).toMatchObject({ limit: 1 });
          // The key is quoted as JSON would, so a control character cannot break the message.
          else
            expect(() => parseOptions('demo', Options, input)).toThrow(
              `${JSON.stringify(key).slice(1, -1)}: Unrecognized key`,
            );
        },
      ),
    );
  });

  it("parseOptions compiles no code: a factory called once at start-up skips the cost of zod's compiled parser", () => {
    const Options = pluginOptions({ limits: z.record(z.string(), z.object({ maxActive: z.number().int().min(1) })) });
    const compiled: string[] = [];
    const original = globalThis.Function;
    globalThis.Function = new Proxy(original, {
      construct(target, args: string[]) {
        compiled.push(String(args.at(-1)).slice(0, 40));
        return Reflect.construct(target, args);
      },
    });
    try {
      parseOptions('demo', Options, { limits: { a: { maxActive: 2 } } });
    } finally {
      globalThis.Function = original;
    }
    expect(compiled).toEqual([]);
  });

  it('parseOptions returns what zod returns, and refuses what zod refuses, with the same issues (fuzzed)', () => {
    const Options = pluginOptions({
      limits: z.record(z.string(), z.object({ maxActive: z.number().int().min(1), maxQueue: z.number().default(0) })),
      per: z.enum(['tool', 'caller']).optional(),
    });
    const limit = fc.record(
      { maxActive: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.double(), fc.string()), maxQueue: fc.integer() },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.record(
          {
            limits: fc.dictionary(fc.string({ maxLength: 4 }), limit, { maxKeys: 3 }),
            per: fc.constantFrom('tool', 'caller', 'nobody'),
            mode: fc.constantFrom('enforce', 'audit', 'loud'),
          },
          { requiredKeys: [] },
        ),
        (input) => {
          const expected = Options.safeParse(input);
          if (expected.success) expect(parseOptions('demo', Options, input)).toEqual(expected.data);
          // zod's own parser, compiled after its first parse: the same issues, in the same words.
          else
            expect(() => parseOptions('demo', Options, input)).toThrow(
              `Invalid options for plugin "demo": ${formatIssues(expected.error)}`,
            );
        },
      ),
    );
  });

  it('pluginOptions() builds a strict schema with mode, so a misspelt option fails at construction', () => {
    const Options = pluginOptions({ file: z.string().min(1) });
    expect(parseOptions('demo', Options, { file: 'a.jsonl' })).toEqual({ file: 'a.jsonl', mode: 'enforce' });
    expect(() => parseOptions('demo', Options, { file: 'a.jsonl', mdoe: 'audit' })).toThrow(/mdoe/);
    expect(() => parseOptions('demo', Options, { file: 'a.jsonl', mode: 'loud' })).toThrow(/mode: /);
  });

  it("keeps each server's state in its own container", () => {
    const a = createServer({ name: 'a', version: '1', logger: quiet() });
    const b = createServer({ name: 'b', version: '1', logger: quiet() });
    expect(a.services.store).not.toBe(b.services.store);
    expect(a.container).not.toBe(b.container);
  });
});

describe('what plugins provide and look up', () => {
  it('registers a tool a plugin provides in apply(), through the import hook and the whole pipeline', async () => {
    const seen: string[] = [];
    const provider = definePlugin({
      name: 'provider',
      version: '1.0.0',
      apply: ({ hooks, tool }) => {
        hooks.import.tap('provider', (batch) => {
          seen.push(...batch.tools.map((t) => `${t.source.kind}:${t.name}`));
          return batch;
        });
        hooks.preCall.tap('provider', (ctx) => void seen.push(`call:${ctx.tool.name}`));
        tool({ name: 'provided', handler: () => ({ content: [{ type: 'text', text: 'from a plugin' }] }) });
      },
    });
    const server = createServer({ name: 's', version: '1', logger: quiet(), plugins: [provider] });
    await server.ready();
    expect(server.tools().map((t) => t.name)).toEqual(['provided']);
    expect((await server.call('provided')).content).toEqual([{ type: 'text', text: 'from a plugin' }]);
    expect(seen).toEqual(['local:provided', 'call:provided']);
    await server.close();
  });

  it('lists what tools/list shows to a request, after every listTools tap', async () => {
    let catalog: PluginApi['tools'] | undefined;
    const hider = definePlugin({
      name: 'hider',
      version: '1.0.0',
      apply: ({ hooks, tools }) => {
        catalog = tools;
        hooks.listTools.tap('hider', (list, ctx) =>
          ctx.headers['x-hide'] ? list.filter((t) => t.name !== ctx.headers['x-hide']) : list,
        );
      },
    });
    const server = createServer({ name: 's', version: '1', logger: quiet(), plugins: [hider] });
    for (const name of ['a', 'b']) server.tool({ name, handler: () => ({ content: [] }) });
    await server.ready();
    expect(catalog?.list({}).map((t) => t.name)).toEqual(['a', 'b']);
    expect(catalog?.list({ headers: { 'x-hide': 'a' } }).map((t) => t.name)).toEqual(['b']);
    await server.close();
  });

  it('cancels a nested call with the signal given to ctx.call(), not the caller’s', async () => {
    const server = createServer({ name: 's', version: '1', logger: quiet() });
    server.tool({
      name: 'slow',
      handler: (_args, ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve({ content: [{ type: 'text', text: 'stopped' }] })),
        ),
    });
    server.tool({
      name: 'outer',
      handler: async (_args, ctx) => {
        const mine = new AbortController();
        const nested = ctx.call('slow', {}, { signal: mine.signal });
        mine.abort();
        const result = await nested.catch((error: unknown) => ({
          content: [{ type: 'text' as const, text: String(error) }],
        }));
        return { content: [{ type: 'text', text: `${ctx.signal.aborted}` }, ...result.content] };
      },
    });
    const result = await server.call('outer');
    expect(result.content[0]).toEqual({ type: 'text', text: 'false' });
    expect(result.content).toHaveLength(2);
    await server.close();
  });
});
