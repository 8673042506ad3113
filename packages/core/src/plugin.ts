import { z } from 'zod/v4';
import { CoreErrorCode, SluiceError, messageOf } from './errors.js';
import type { CoreHooks, PluginHooks } from './hooks.js';
import { TapRegistry, createPluginHooks } from './hooks.js';
import { formatIssues } from './issues.js';
import type { Logger } from './logger.js';
import type { Services } from './container.js';
import type { ToolCatalog } from './tool-table.js';
import type { ToolDefinition } from './tool.js';

/** `enforce` refuses, `audit` logs what it would have refused and lets the call through, `off` does nothing. */
export type PluginMode = 'enforce' | 'audit' | 'off';

/** The schema every plugin's `mode` option uses. */
export const PluginModeSchema = z
  .enum(['enforce', 'audit', 'off'])
  .describe(
    '`enforce` (default): refuse what the plugin refuses; `audit`: log the refusal and let the call proceed; `off`: the plugin does nothing.',
  );

/** What a plugin receives in `apply()`. */
export interface PluginApi {
  /** Tap these, here and only here. */
  readonly hooks: PluginHooks;
  /** The server's logger, bound to this plugin's name. */
  readonly logger: Logger;
  /** The store, the clock, the logger, and the server's container. */
  readonly services: Services;
  readonly mode: PluginMode;
  /** The server's name and version. */
  readonly server: { readonly name: string; readonly version: string };
  /**
   * The tools exposed now, under their final names (read at call time: during
   * apply() there are none yet), and a subscription to their changes.
   */
  readonly tools: ToolCatalog;
  /**
   * Registers a tool the plugin provides (say, a meta-tool over the other
   * tools), as `server.tool()` does: it enters through the `import` hook as a
   * local tool and every call to it runs the whole pipeline. Tools a plugin
   * registers in `apply()` are registered once every plugin is applied.
   */
  readonly tool: (definition: ToolDefinition) => void;
}

export interface Plugin {
  readonly name: string;
  readonly version: string;
  /** Default `enforce`. In `audit`, a `preCall` refusal is logged and the call proceeds. */
  readonly mode?: PluginMode;
  apply(api: PluginApi): void;
  /** Releases what `apply()` acquired (files, timers, connections); called by `server.close()` after calls drain, in reverse order. */
  close?(): void | Promise<void>;
}

const PLUGIN_NAME = /^[a-z0-9@][a-z0-9@/._-]{0,99}$/i;

/** Checks a plugin's shape and freezes it. Use it in every plugin factory. */
export function definePlugin<P extends Plugin>(plugin: P): Readonly<P> {
  assertPlugin(plugin);
  return Object.freeze(plugin);
}

function assertPlugin(plugin: unknown): asserts plugin is Plugin {
  const p = plugin as Partial<Plugin> | null;
  if (typeof p !== 'object' || p === null)
    throw new SluiceError(CoreErrorCode.INVALID_PLUGIN, 'A plugin must be an object');
  if (typeof p.name !== 'string' || !PLUGIN_NAME.test(p.name)) {
    throw new SluiceError(
      CoreErrorCode.INVALID_PLUGIN,
      `Plugin name ${JSON.stringify(p.name)} is invalid: use 1-100 letters, digits, "@", "/", ".", "_" or "-"`,
    );
  }
  if (typeof p.version !== 'string' || p.version.length === 0) {
    throw new SluiceError(CoreErrorCode.INVALID_PLUGIN, `Plugin "${p.name}" has no version`, { plugin: p.name });
  }
  if (typeof p.apply !== 'function') {
    throw new SluiceError(CoreErrorCode.INVALID_PLUGIN, `Plugin "${p.name}" has no apply() function`, {
      plugin: p.name,
    });
  }
  if (p.close !== undefined && typeof p.close !== 'function') {
    throw new SluiceError(CoreErrorCode.INVALID_PLUGIN, `Plugin "${p.name}" has a close that is not a function`, {
      plugin: p.name,
    });
  }
  if (p.mode !== undefined && !PluginModeSchema.safeParse(p.mode).success) {
    throw new SluiceError(
      CoreErrorCode.INVALID_PLUGIN,
      `Plugin "${p.name}" has mode ${JSON.stringify(p.mode)}; use enforce, audit or off`,
      {
        plugin: p.name,
      },
    );
  }
}

/**
 * A plugin's options schema: strict (a misspelt option is an error, not
 * silently dropped), with `mode` defaulting to `enforce`. Nested objects
 * should be `z.strictObject` too.
 */
export function pluginOptions<const Shape extends z.ZodRawShape>(shape: Shape) {
  return z.strictObject({ mode: PluginModeSchema.default('enforce'), ...shape });
}

/**
 * Parses a plugin factory's options with its zod schema: bad options throw at
 * construction, with the path of each bad field. An option the schema does
 * not name is refused too, even when the schema is a plain `z.object` that
 * would drop it: a misspelt option must not pass unnoticed.
 */
export function parseOptions<S extends z.ZodType>(plugin: string, schema: S, options: unknown): z.output<S> {
  const unknown = unknownKeys(schema, options);
  const parsed = schema.safeParse(options, ONCE);
  if (parsed.success && unknown.length === 0) return parsed.data;
  // Unknown top-level keys are named one by one below, with the keys there are.
  const issues = parsed.success
    ? []
    : parsed.error.issues.filter((issue) => issue.code !== 'unrecognized_keys' || issue.path.length > 0);
  const detail = [...unknown, ...(issues.length > 0 ? [formatIssues(issues)] : [])].join('; ');
  throw new SluiceError(CoreErrorCode.INVALID_OPTIONS, `Invalid options for plugin "${plugin}": ${detail}`, { plugin });
}

/**
 * How options are parsed: once per factory call, so zod's compiled fast path
 * for object schemas (a `new Function` per object, built on the first parse
 * and paying off only over many) would cost more than it saves, at the start
 * of every program that builds a plugin. The result and the issues are the same.
 */
export const ONCE = Object.freeze({ jitless: true });

interface ObjectDef {
  readonly type?: string;
  readonly shape?: object;
  readonly catchall?: { readonly _zod?: { readonly def?: { readonly type?: string } } };
}

/** The top-level keys an object schema does not name (unless it lets any key in), each as an issue. */
function unknownKeys(schema: z.ZodType, options: unknown): string[] {
  // Read zod 4's definition by shape, not by class: a plugin's zod may be another copy than core's.
  const def = (schema as { _zod?: { def?: ObjectDef } })._zod?.def;
  if (def?.type !== 'object' || def.shape === undefined) return [];
  if (def.catchall !== undefined && def.catchall._zod?.def?.type !== 'never') return [];
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return [];
  const shape = def.shape;
  const known = Object.keys(shape);
  const names = known.length > 0 ? ` (the options are ${known.slice(0, 20).join(', ')})` : '';
  return Object.keys(options)
    .filter((key) => !Object.hasOwn(shape, key))
    .slice(0, 10)
    .map((key) => `${JSON.stringify(key).slice(1, -1).slice(0, 60)}: Unrecognized key${names}`);
}

interface ApplyContext {
  readonly hooks: CoreHooks;
  readonly logger: Logger;
  readonly services: Services;
  readonly server: { readonly name: string; readonly version: string };
  readonly tools: ToolCatalog;
  /** Registers a tool a plugin provides. */
  readonly tool: (definition: ToolDefinition) => void;
}

/**
 * Applies the plugins in order, then checks every ordering reference and
 * locks the hooks. Any problem throws here, before the server serves.
 */
export function applyPlugins(plugins: readonly Plugin[], context: ApplyContext): readonly Plugin[] {
  const registry = new TapRegistry();
  const names = new Set<string>();
  for (const plugin of plugins) {
    assertPlugin(plugin);
    if (names.has(plugin.name)) {
      throw new SluiceError(
        CoreErrorCode.DUPLICATE_PLUGIN,
        `Two plugins are named "${plugin.name}": each plugin may be added once`,
        {
          plugin: plugin.name,
        },
      );
    }
    names.add(plugin.name);
  }
  const applied: Plugin[] = [];
  for (const plugin of plugins) {
    const mode = plugin.mode ?? 'enforce';
    const logger = context.logger.child({ plugin: plugin.name });
    if (mode === 'off') {
      logger.debug({ event: 'plugin.off' }, `plugin ${plugin.name} is off`);
      continue;
    }
    const hooks = createPluginHooks(context.hooks, { plugin: plugin.name, registry, audit: mode === 'audit', logger });
    registry.applying = plugin.name;
    try {
      plugin.apply({
        hooks,
        logger,
        services: context.services,
        mode,
        server: context.server,
        tools: context.tools,
        tool: context.tool,
      });
    } catch (error) {
      if (SluiceError.is(error) && error.plugin !== undefined) throw error;
      throw new SluiceError(
        CoreErrorCode.PLUGIN_FAILED,
        `Plugin "${plugin.name}" failed in apply(): ${messageOf(error)}`,
        {
          plugin: plugin.name,
          hook: 'apply',
          cause: error,
        },
      );
    } finally {
      registry.applying = undefined;
    }
    applied.push(plugin);
  }
  for (const ref of registry.references) {
    if (!names.has(ref.before) && !registry.tapNames.has(ref.before)) {
      throw new SluiceError(
        CoreErrorCode.UNKNOWN_PLUGIN_REFERENCE,
        `Plugin "${ref.plugin}" orders its "${ref.hook}" tap before "${ref.before}", which is not a registered plugin`,
        { plugin: ref.plugin, hook: ref.hook },
      );
    }
  }
  registry.locked = true;
  return applied;
}
