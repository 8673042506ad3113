import type tapable from 'tapable';
import type { InputRequiredResult } from '@modelcontextprotocol/server';
import type { CallToolResult, Tool } from './protocol.js';
import type { CallContext, Executor, ListContext, Outcome } from './context.js';
import type { ImportBatch, SluiceTool } from './tool.js';
import type { FeatureBatch, FeatureContext, FeatureResult } from './features/feature-context.js';
import { CoreErrorCode, SluiceError, attribute } from './errors.js';
import type { Logger } from './logger.js';
import { requireCjs } from './require-cjs.js';

// tapable loads with the first server's hooks, not at import.
let hookClasses: typeof tapable | undefined;
const tapableClasses = (): typeof tapable => (hookClasses ??= requireCjs('tapable') as typeof tapable);

/** The hooks the core declares, once, as tapable hooks. */
export interface CoreHooks {
  /** Tools entering the server: drop (with a reason), annotate or rename them. */
  readonly import: tapable.AsyncSeriesWaterfallHook<[ImportBatch]>;
  /** Each `tools/list`: filter what this request may see. */
  readonly listTools: tapable.SyncWaterfallHook<[Tool[], ListContext]>;
  /**
   * Before each call: refuse by returning a result, or add outgoing `_meta`.
   * A call that came over MCP (`ctx.mcp` set, no `ctx.parent`) may also be
   * answered with an input-required result (see `ApprovalDecision`): the SDK
   * hands it to a 2026-07-28 client, which retries the call with the input.
   */
  readonly preCall: tapable.AsyncSeriesBailHook<[CallContext], CallToolResult | InputRequiredResult | undefined>;
  /** Once per tool at registration: wrap its executor. */
  readonly execute: tapable.SyncWaterfallHook<[Executor, SluiceTool]>;
  /** After each call that produced a result: rewrite it. */
  readonly postCall: tapable.AsyncSeriesWaterfallHook<[CallToolResult, CallContext]>;
  /** Always, after the call ends: observe. Never throws into the call. */
  readonly settled: tapable.SyncHook<[CallContext, Outcome]>;
  /**
   * Each request for an upstream's resources, templates or prompts (lists,
   * reads, gets, completion, subscriptions), once per upstream concerned:
   * return a reason to hide that upstream's items from a list, or to refuse
   * the request (the client sees the resource or prompt as not found).
   */
  readonly featureAccess: tapable.SyncBailHook<[FeatureContext], string | undefined>;
  /** Each `resources/read` and `prompts/get` answer of an upstream before it reaches the client: rewrite it. */
  readonly featureResult: tapable.AsyncSeriesWaterfallHook<[FeatureResult, FeatureContext]>;
  /** An upstream's prompts, resources and templates entering the server: drop (with a reason) or annotate them. */
  readonly importFeatures: tapable.AsyncSeriesWaterfallHook<[FeatureBatch]>;
}

export type HookName = keyof CoreHooks;

export const HOOK_NAMES: readonly HookName[] = Object.freeze([
  'import',
  'listTools',
  'preCall',
  'execute',
  'postCall',
  'settled',
  'featureAccess',
  'featureResult',
  'importFeatures',
]);

export function createCoreHooks(): CoreHooks {
  const { AsyncSeriesBailHook, AsyncSeriesWaterfallHook, SyncBailHook, SyncHook, SyncWaterfallHook } = tapableClasses();
  return Object.freeze({
    import: new AsyncSeriesWaterfallHook<[ImportBatch]>(['batch'], 'import'),
    listTools: new SyncWaterfallHook<[Tool[], ListContext]>(['tools', 'context'], 'listTools'),
    preCall: new AsyncSeriesBailHook<[CallContext], CallToolResult | InputRequiredResult | undefined>(
      ['context'],
      'preCall',
    ),
    execute: new SyncWaterfallHook<[Executor, SluiceTool]>(['next', 'tool'], 'execute'),
    postCall: new AsyncSeriesWaterfallHook<[CallToolResult, CallContext]>(['result', 'context'], 'postCall'),
    settled: new SyncHook<[CallContext, Outcome]>(['context', 'outcome'], 'settled'),
    featureAccess: new SyncBailHook<[FeatureContext], string | undefined>(['context'], 'featureAccess'),
    featureResult: new AsyncSeriesWaterfallHook<[FeatureResult, FeatureContext]>(
      ['result', 'context'],
      'featureResult',
    ),
    importFeatures: new AsyncSeriesWaterfallHook<[FeatureBatch]>(['batch'], 'importFeatures'),
  });
}

/** Where a tap goes among the other taps of its hook. */
export interface TapOptions {
  /** The tap's name; by convention the plugin's name. */
  name: string;
  /** A stage from `Stage`; lower runs first. Default `Stage.DEFAULT`. */
  stage?: number;
  /** Run before the taps of these plugins. Every name must be a registered plugin. */
  before?: string | readonly string[];
}

type TapArg = TapOptions | string;

interface SyncTappable<Args extends unknown[], R> {
  tap(options: TapArg, fn: (...args: Args) => R): void;
  isUsed(): boolean;
}

interface AsyncTappable<Args extends unknown[], R> extends SyncTappable<Args, R> {
  tapPromise(options: TapArg, fn: (...args: Args) => Promise<R>): void;
}

/** The hooks as a plugin sees them inside `apply()`. */
export interface PluginHooks {
  readonly import: AsyncTappable<[ImportBatch], ImportBatch>;
  readonly listTools: SyncTappable<[Tool[], ListContext], Tool[]>;
  readonly preCall: AsyncTappable<[CallContext], CallToolResult | InputRequiredResult | undefined>;
  readonly execute: SyncTappable<[Executor, SluiceTool], Executor>;
  readonly postCall: AsyncTappable<[CallToolResult, CallContext], CallToolResult>;
  readonly settled: SyncTappable<[CallContext, Outcome], void>;
  readonly featureAccess: SyncTappable<[FeatureContext], string | undefined>;
  readonly featureResult: AsyncTappable<[FeatureResult, FeatureContext], FeatureResult>;
  readonly importFeatures: AsyncTappable<[FeatureBatch], FeatureBatch>;
}

/** Shared between the facades of one server: who may tap, and what was tapped. */
export class TapRegistry {
  /** The plugin whose `apply()` is running, if any. */
  applying: string | undefined;
  locked = false;
  readonly references: { plugin: string; hook: HookName; before: string }[] = [];
  readonly tapNames = new Set<string>();
}

type AnyFn = (...args: never[]) => unknown;

function normalize(options: TapArg, plugin: string, hook: HookName): { name: string; stage: number; before: string[] } {
  const opts = typeof options === 'string' ? { name: options } : options;
  if (typeof opts !== 'object' || opts === null || typeof opts.name !== 'string' || opts.name.length === 0) {
    throw new SluiceError(CoreErrorCode.INVALID_TAP, `Plugin "${plugin}" tapped "${hook}" without a name`, {
      plugin,
      hook,
    });
  }
  const stage = opts.stage ?? 0;
  if (typeof stage !== 'number' || Number.isNaN(stage)) {
    throw new SluiceError(
      CoreErrorCode.INVALID_TAP,
      `Plugin "${plugin}" tapped "${hook}" with a stage that is not a number`,
      {
        plugin,
        hook,
      },
    );
  }
  const before = opts.before === undefined ? [] : typeof opts.before === 'string' ? [opts.before] : [...opts.before];
  return { name: opts.name, stage, before };
}

interface FacadeOptions {
  plugin: string;
  registry: TapRegistry;
  /** Audit mode: a preCall refusal is logged and the call goes through. */
  audit: boolean;
  logger: Logger;
}

/**
 * Builds the hooks object one plugin sees. Each tap is checked (name, stage,
 * timing), and its function is wrapped so that anything it throws names the
 * plugin and the hook.
 */
export function createPluginHooks(core: CoreHooks, options: FacadeOptions): PluginHooks {
  const { plugin, registry } = options;

  const register = (hook: HookName, tapOptions: TapArg, fn: AnyFn, kind: 'tap' | 'tapPromise'): void => {
    if (registry.locked || registry.applying !== plugin) {
      throw new SluiceError(
        CoreErrorCode.HOOKS_LOCKED,
        `Plugin "${plugin}" tapped "${hook}" outside apply(): hooks are tapped only while the server applies its plugins, never after it starts`,
        { plugin, hook },
      );
    }
    if (typeof fn !== 'function') {
      throw new SluiceError(CoreErrorCode.INVALID_TAP, `Plugin "${plugin}" tapped "${hook}" without a function`, {
        plugin,
        hook,
      });
    }
    const { name, stage, before } = normalize(tapOptions, plugin, hook);
    for (const ref of before) registry.references.push({ plugin, hook, before: ref });
    registry.tapNames.add(name);
    const wrapped = kind === 'tap' ? wrapSync(hook, fn) : wrapPromise(hook, fn);
    const tapArgs = { name, stage, ...(before.length > 0 ? { before: before as unknown as string } : {}) };
    const target = core[hook] as unknown as Record<typeof kind, (o: unknown, f: unknown) => void>;
    target[kind](tapArgs, wrapped);
  };

  const wrapSync = (hook: HookName, fn: AnyFn): AnyFn => {
    if (hook === 'execute') return wrapExecuteTap(fn as unknown as ExecuteTap);
    const guarded = (...args: never[]): unknown => {
      try {
        return fn(...args);
      } catch (error) {
        throw attribute(error, plugin, hook);
      }
    };
    return hook === 'preCall' && options.audit ? auditPreCall(guarded) : guarded;
  };

  const wrapPromise = (hook: HookName, fn: AnyFn): AnyFn => {
    const guarded = async (...args: never[]): Promise<unknown> => {
      try {
        return await fn(...args);
      } catch (error) {
        throw attribute(error, plugin, hook);
      }
    };
    return hook === 'preCall' && options.audit ? auditPreCall(guarded) : guarded;
  };

  // A refusal in audit mode becomes a log line; the call goes on.
  const auditPreCall = (fn: AnyFn): AnyFn => {
    const report = (result: unknown, ctx: CallContext): undefined => {
      if (result !== undefined) {
        const code = readRefusalCode(result);
        ctx.logger.warn(
          { event: 'audit.refusal', plugin, tool: ctx.tool.name, code },
          `audit: ${plugin} would have refused this call`,
        );
      }
      return undefined;
    };
    return (...args: never[]) => {
      const ctx = args[0] as unknown as CallContext;
      const out = fn(...args);
      return out instanceof Promise ? out.then((r) => report(r, ctx)) : report(out, ctx);
    };
  };

  type ExecuteTap = (next: Executor, tool: SluiceTool) => Executor;
  const wrapExecuteTap = (fn: ExecuteTap): AnyFn =>
    ((next: Executor, tool: SluiceTool): Executor => {
      let built: Executor;
      try {
        built = fn(next, tool);
      } catch (error) {
        throw attribute(error, plugin, 'execute');
      }
      if (built === next) return next; // the plugin does not apply to this tool: zero cost
      if (typeof built !== 'function') {
        throw new SluiceError(
          CoreErrorCode.INVALID_TAP,
          `Plugin "${plugin}" returned a non-function executor for tool "${tool.name}"`,
          {
            plugin,
            hook: 'execute',
          },
        );
      }
      const onError = (error: unknown): never => {
        throw attribute(error, plugin, 'execute');
      };
      return (ctx) => {
        try {
          return built(ctx).then(undefined, onError);
        } catch (error) {
          return Promise.reject(attribute(error, plugin, 'execute'));
        }
      };
    }) as unknown as AnyFn;

  const facade = <H extends HookName>(hook: H, async: boolean) => {
    const target = core[hook];
    const base = {
      tap: (o: TapArg, fn: AnyFn) => register(hook, o, fn, 'tap'),
      isUsed: () => target.isUsed(),
    };
    return Object.freeze(
      async ? { ...base, tapPromise: (o: TapArg, fn: AnyFn) => register(hook, o, fn, 'tapPromise') } : base,
    );
  };

  return Object.freeze({
    import: facade('import', true),
    listTools: facade('listTools', false),
    preCall: facade('preCall', true),
    execute: facade('execute', false),
    postCall: facade('postCall', true),
    settled: facade('settled', false),
    featureAccess: facade('featureAccess', false),
    featureResult: facade('featureResult', true),
    importFeatures: facade('importFeatures', true),
  }) as unknown as PluginHooks;
}

function readRefusalCode(result: unknown): string | undefined {
  const meta = (result as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const error = meta?.['dev.sluice/error'] as { code?: unknown } | undefined;
  return typeof error?.code === 'string' ? error.code : undefined;
}
