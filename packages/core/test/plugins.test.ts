import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CoreErrorCode, SluiceError, createServer, definePlugin, parseOptions } from '@sluice/core';
import type { PluginApi } from '@sluice/core';
import { captureLogger } from '@sluice/core/testing';

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
      apply: ({ hooks }) => hooks.settled.tap('' as never, noop),
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

  it('parseOptions names every bad field', () => {
    const Options = z.object({ maxActive: z.number().int().min(1), nested: z.object({ keys: z.array(z.string()) }) });
    expect(() => parseOptions('demo', Options, { maxActive: 0, nested: { keys: [1] } })).toThrow(
      /maxActive: .*nested\.keys\.0: /,
    );
  });

  it("keeps each server's state in its own container", () => {
    const a = createServer({ name: 'a', version: '1', logger: quiet() });
    const b = createServer({ name: 'b', version: '1', logger: quiet() });
    expect(a.services.store).not.toBe(b.services.store);
    expect(a.container).not.toBe(b.container);
  });
});
