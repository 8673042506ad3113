import * as tapable from 'tapable';
import type { InputRequiredResult } from '@modelcontextprotocol/server';
import type { CallToolResult, Tool } from './protocol.js';
import type { CallContext, Executor, ListContext, Outcome } from './context.js';
import type { ImportBatch, SluiceTool } from './tool.js';
import type { FeatureBatch, FeatureContext, FeatureResult } from './features/feature-context.js';
import type { GuardedKind, RequestContext, RequestExecutor, RequestTarget } from './request.js';
import { GUARDED_KINDS } from './request.js';
import { CoreErrorCode, SluiceError, attribute } from './errors.js';
import { attributeRefusal, refusal } from './refusal.js';
import type { Logger } from './logger.js';

// A static import, so that a bundler (esbuild, webpack, rollup) carries tapable
// into a single file: every server builds its hooks, so nothing is saved by
// loading it later. Core's ESM build inlines it (scripts/build-package.mjs), so
// that an ESM bundle needs no `require` for the Node built-in it asks for.
type Tapable = typeof tapable;
const tapableClasses = (): Tapable => tapable;

/**
 * What a `request` tap may answer: a refusal (built by `refusal()`), an
 * input-required result (tool calls over MCP only), or nothing to go on.
 */
export type RequestAnswer = CallToolResult | InputRequiredResult | undefined;

/** What a `preCall` tap may answer: a `request` answer. */
export type PreCallAnswer = RequestAnswer;

/**
 * What a `response` tap receives and returns: the request's answer, shaped by
 * its kind (`ctx.kind`): a `CallToolResult` on `tools/call`, a
 * `ReadResourceResult` on `resources/read`, a `GetPromptResult` on
 * `prompts/get`, a `CompleteResult` on `completion/complete`, an empty
 * result on subscriptions. Narrow by `ctx.kind` before reading it.
 */
export type RequestResult = unknown;

/**
 * The hooks the core declares: this table is the one place that names them.
 * `async` says whether taps may return promises (`tapPromise`).
 */
const HOOKS = {
  /** Tools entering the server: drop (with a reason), annotate or rename them. */
  import: { async: true, create: (t: Tapable) => new t.AsyncSeriesWaterfallHook<[ImportBatch]>(['batch'], 'import') },
  /** Each `tools/list`: filter what this request may see. */
  listTools: {
    async: false,
    create: (t: Tapable) => new t.SyncWaterfallHook<[Tool[], ListContext]>(['tools', 'context'], 'listTools'),
  },
  /**
   * Before every guarded request of the kinds the tap is for (`kinds`,
   * default every kind: tool calls, resource reads and subscriptions, prompt
   * gets, completions, log levels): refuse by returning a `refusal()` (with
   * `NOT_FOUND`, the item reads as one that does not exist, a tool included),
   * or add keys to `ctx.outgoingMeta`, the `_meta` the request sends on upstream. A tool call that came over MCP (`ctx.mcp` set,
   * no `ctx.parent`) may also be answered with an input-required result (see
   * `ApprovalDecision`). Taps are planned per target: a request of a kind or
   * tool the tap is not for skips it at no cost. `preCall` is this hook for
   * tool calls only.
   */
  request: {
    async: true,
    create: (t: Tapable) => new t.AsyncSeriesBailHook<[RequestContext], RequestAnswer>(['context'], 'request'),
  },
  /** Once per tool at registration: wrap its executor. */
  execute: {
    async: false,
    create: (t: Tapable) => new t.SyncWaterfallHook<[Executor, SluiceTool]>(['next', 'tool'], 'execute'),
  },
  /**
   * Once per tool, and once per kind of feature request and upstream, when
   * first planned: wrap the executor of every guarded request (tool calls,
   * resource reads and subscriptions, prompt gets, completions, log levels). A guard
   * written once sees every kind; it opts out of a kind or target by
   * returning `next` unchanged, which costs nothing per request.
   */
  guard: {
    async: false,
    create: (t: Tapable) => new t.SyncWaterfallHook<[RequestExecutor, RequestTarget]>(['next', 'target'], 'guard'),
  },
  /**
   * After every guarded request of the kinds the tap is for (default every
   * kind) that produced an answer (not a refusal, not an input-required
   * result): rewrite it; return undefined to keep it. `postCall` is this
   * hook for tool calls only, `featureResult` for reads and prompt gets.
   */
  response: {
    async: true,
    create: (t: Tapable) =>
      new t.AsyncSeriesWaterfallHook<[RequestResult, RequestContext]>(['result', 'context'], 'response'),
  },
  /** Always, after the call ends: observe. Never throws into the call. */
  settled: {
    async: false,
    create: (t: Tapable) => new t.SyncHook<[CallContext, Outcome]>(['context', 'outcome'], 'settled'),
  },
  /**
   * Each list of resources, templates or prompts, item by item (`ctx.target`
   * names the item; once per list on an adopted server's own lists): return
   * a reason to hide it. Lists only: a request for one item is decided in
   * `request`, which sees every kind (refuse with `NOT_FOUND` to make the
   * item look absent there too). `featureAccess` is this hook and a
   * `request` tap at once.
   */
  listFeatures: {
    async: false,
    create: (t: Tapable) => new t.SyncBailHook<[FeatureContext], string | undefined>(['context'], 'listFeatures'),
  },
  /** An upstream's prompts, resources and templates entering the server: drop (with a reason) or annotate them. */
  importFeatures: {
    async: true,
    create: (t: Tapable) => new t.AsyncSeriesWaterfallHook<[FeatureBatch]>(['batch'], 'importFeatures'),
  },
} as const;

type HookTable = typeof HOOKS;

/** The hooks the core declares, once, as tapable hooks. */
export type CoreHooks = { readonly [K in keyof HookTable]: ReturnType<HookTable[K]['create']> };

/** A hook the core runs. */
export type CoreHookName = keyof HookTable;

/**
 * The hooks kept for plugins written before the one request path: each is
 * an adapter that taps a core hook for some kinds only. `preCall` and
 * `postCall` are `request` and `response` for tool calls; `featureResult`
 * is `response` for `resources/read` and `prompts/get`, its taps given
 * `{ method, result }`; `featureAccess` is `listFeatures`, and a `request`
 * tap for the kinds that name one resource or prompt, where a reason it
 * gives refuses the request with `NOT_FOUND`.
 */
export type AdapterHookName = 'preCall' | 'postCall' | 'featureResult' | 'featureAccess';

/** A hook a plugin may tap. */
export type HookName = CoreHookName | AdapterHookName;

const TOOL_CALLS: ReadonlySet<GuardedKind> = new Set(['tools/call']);
const READS_AND_GETS: ReadonlySet<GuardedKind> = new Set(['resources/read', 'prompts/get']);
/** The requests that name a resource, a prompt or a completion's reference: every kind but tool calls and setLevel. */
const FEATURE_REQUESTS: ReadonlySet<GuardedKind> = new Set(
  GUARDED_KINDS.filter((kind) => kind !== 'tools/call' && kind !== 'logging/setLevel'),
);

/** Where an adapter's taps go, and the kinds they are for. */
const ADAPTERS: {
  readonly [K in AdapterHookName]: {
    readonly core: CoreHookName;
    readonly kinds: ReadonlySet<GuardedKind> | undefined;
  };
} = {
  preCall: { core: 'request', kinds: TOOL_CALLS },
  postCall: { core: 'response', kinds: TOOL_CALLS },
  featureResult: { core: 'response', kinds: READS_AND_GETS },
  // Its list role; its request role is a `request` tap too (see `register`).
  featureAccess: { core: 'listFeatures', kinds: undefined },
};

const CORE_HOOK_NAMES: readonly CoreHookName[] = Object.freeze(Object.keys(HOOKS) as CoreHookName[]);

/** The hook names a plugin may tap, in the order a call meets them. */
export const HOOK_NAMES: readonly HookName[] = Object.freeze([
  'import',
  'listTools',
  'request',
  'preCall',
  'execute',
  'guard',
  'response',
  'postCall',
  'settled',
  'listFeatures',
  'featureAccess',
  'featureResult',
  'importFeatures',
] satisfies HookName[]);

export function createCoreHooks(): CoreHooks {
  const hooks: Partial<Record<CoreHookName, unknown>> = {};
  const classes = tapableClasses();
  for (const name of CORE_HOOK_NAMES) hooks[name] = HOOKS[name].create(classes);
  return Object.freeze(hooks as CoreHooks);
}

/** Where a tap goes among the other taps of its hook. */
export interface TapOptions {
  /** The tap's name; by convention the plugin's name. */
  name: string;
  /** A stage from `Stage`; lower runs first. Default `Stage.DEFAULT`. */
  stage?: number;
  /** Run before the taps of these plugins. Every name must be a registered plugin. */
  before?: string | readonly string[];
  /**
   * `request`, `response`, `preCall`, `postCall` and `settled` only: the
   * tools this tap is for. Asked once per tool as it is registered (a
   * registered tool is frozen); calls of other tools skip the tap at no
   * cost, and a call that no `settled` tap is for is not timed. Requests of
   * other kinds are not tool calls: it does not narrow them. Default: every tool.
   */
  tools?: (tool: SluiceTool) => boolean;
  /**
   * `request` and `response` only: the request kinds this tap is for
   * (default every kind in `GUARDED_KINDS`). A plugin opts out of a kind
   * here: requests of other kinds skip the tap, decided when their target is
   * planned, at no cost per request.
   */
  kinds?: readonly GuardedKind[];
  /**
   * `request` and `preCall` only: run this tap ahead of every other one, and
   * on a tool call before its arguments are checked against the input schema
   * (it sees them as sent). For a tap that decides from the caller alone
   * whether the item is there for it at all (authz), so that a caller it
   * hides the tool from (`NOT_FOUND`) learns nothing of the tool's schema.
   */
  beforeArguments?: boolean;
}

type TapArg = TapOptions | string;

/** The hooks whose taps may answer a call with a result: a refusal there names its plugin. */
const ANSWERING: ReadonlySet<HookName> = new Set(['request', 'response', 'preCall', 'postCall']);

/** The hooks the pipeline runs per call: their taps may name the tools they are for (`TapOptions.tools`). */
const PER_TOOL: ReadonlySet<HookName> = new Set(['request', 'response', 'preCall', 'postCall', 'settled']);

/** The hooks whose taps may name the request kinds they are for (`TapOptions.kinds`). */
const PER_KIND: ReadonlySet<HookName> = new Set(['request', 'response']);

/** The hooks whose taps may run before a tool call's arguments are checked (`TapOptions.beforeArguments`). */
const BEFORE_ARGUMENTS: ReadonlySet<HookName> = new Set(['request', 'preCall']);

/** The hooks whose refusals audit mode turns into log lines. */
const REFUSING: ReadonlySet<HookName> = new Set(['request', 'preCall']);

/** Which tools a per-call tap is for; see `TapOptions.tools`. */
export type ToolFilter = (tool: SluiceTool) => boolean;

/** One hook's facade before its types are read back from the table. */
interface RawFacade {
  tap(options: TapArg, fn: AnyFn): void;
  tapPromise?(options: TapArg, fn: AnyFn): void;
  isUsed(): boolean;
}

interface SyncTappable<Args extends unknown[], R> {
  tap(options: TapArg, fn: (...args: Args) => R): void;
  isUsed(): boolean;
}

interface AsyncTappable<Args extends unknown[], R> extends SyncTappable<Args, R> {
  tapPromise(options: TapArg, fn: (...args: Args) => Promise<R>): void;
}

// Every tapable hook has `promise(...args): Promise<result>`: its arguments and result, read back from the table.
type ArgsOf<H> = H extends { promise(...args: infer A): Promise<unknown> } ? A : never;
type ResultOf<H> = H extends { promise(...args: never[]): Promise<infer R> } ? R : never;

/**
 * A per-call hook the pipeline runs itself (`preCall`, `postCall`): a `tap`
 * answers at once, or returns a promise only on the calls where it must wait
 * (the pipeline waits for it then, and for nothing otherwise).
 */
interface CallTappable<Args extends unknown[], R> {
  tap(options: TapArg, fn: (...args: Args) => R | Promise<R>): void;
  tapPromise(options: TapArg, fn: (...args: Args) => Promise<R>): void;
  isUsed(): boolean;
}

/** The core hooks the pipeline runs per request, tap by tap. */
type CallHookName = 'request' | 'response';

/** The adapters' signatures, as plugins written for them tap them. */
interface AdapterHooks {
  readonly preCall: CallTappable<[CallContext], PreCallAnswer>;
  readonly postCall: CallTappable<[CallToolResult, CallContext], CallToolResult>;
  readonly featureResult: AsyncTappable<[FeatureResult, FeatureContext], FeatureResult>;
  readonly featureAccess: SyncTappable<[FeatureContext], string | undefined>;
}

/** The hooks as a plugin sees them inside `apply()`: `tapPromise` only where the hook is async. */
export type PluginHooks = {
  readonly [K in CoreHookName]: K extends CallHookName
    ? CallTappable<ArgsOf<CoreHooks[K]>, ResultOf<CoreHooks[K]>>
    : HookTable[K]['async'] extends true
      ? AsyncTappable<ArgsOf<CoreHooks[K]>, ResultOf<CoreHooks[K]>>
      : SyncTappable<ArgsOf<CoreHooks[K]>, ResultOf<CoreHooks[K]>>;
} & AdapterHooks;

/** Shared between the facades of one server: who may tap, and what was tapped. */
export class TapRegistry {
  /** The plugin whose `apply()` is running, if any. */
  applying: string | undefined;
  locked = false;
  readonly references: { plugin: string; hook: HookName; before: string }[] = [];
  readonly tapNames = new Set<string>();
}

type AnyFn = (...args: never[]) => unknown;

/** A tap as tapable takes it. */
interface RawTap {
  name: string;
  stage?: number;
  before?: string;
  /** Kept on tapable's tap object, where the pipeline reads it. */
  tools?: ToolFilter;
  /** The request kinds the tap is for; absent: every kind. Kept for the pipeline, as `tools`. */
  kinds?: ReadonlySet<GuardedKind>;
  /** Runs ahead of the other taps, and of a tool call's argument check. Kept for the pipeline, as `tools`. */
  beforeArguments?: true;
  /**
   * A per-call `tap` the pipeline may run directly, without the facade's
   * wrapper, naming `plugin` itself in what it throws or refuses.
   */
  direct?: { readonly fn: AnyFn; readonly plugin: string; readonly hook: HookName };
}

/**
 * Any core hook, seen from the registering side: a tap function that takes
 * anything and returns what the hook wants fits every hook's typings.
 */
type RawTapFn = (...args: unknown[]) => never;
interface RawHook {
  tap(options: RawTap, fn: RawTapFn): void;
  tapPromise?(options: RawTap, fn: RawTapFn): void;
  isUsed(): boolean;
}

function normalize(
  options: TapArg,
  plugin: string,
  hook: HookName,
): {
  name: string;
  stage: number;
  before: string[];
  tools: ToolFilter | undefined;
  kinds: ReadonlySet<GuardedKind> | undefined;
  beforeArguments: boolean;
} {
  // Plugins may be plain JavaScript: check the shape rather than trust the type.
  const opts = (typeof options === 'string' ? { name: options } : options) as Partial<TapOptions> | null | undefined;
  if (typeof opts !== 'object' || opts === null || typeof opts.name !== 'string' || opts.name.length === 0) {
    throw invalidTap(plugin, hook, 'without a name');
  }
  const stage = opts.stage ?? 0;
  if (typeof stage !== 'number' || Number.isNaN(stage))
    throw invalidTap(plugin, hook, 'with a stage that is not a number');
  const before = opts.before === undefined ? [] : typeof opts.before === 'string' ? [opts.before] : [...opts.before];
  const tools = opts.tools;
  if (tools !== undefined && (typeof tools !== 'function' || !PER_TOOL.has(hook))) {
    const problem =
      typeof tools !== 'function' ? 'that is not a function' : 'but only preCall, postCall and settled taps take it';
    throw invalidTap(plugin, hook, `with \`tools\` ${problem}`);
  }
  const kinds = opts.kinds;
  if (
    kinds !== undefined &&
    (!PER_KIND.has(hook) || !Array.isArray(kinds) || !kinds.every((k) => GUARDED_KIND_SET.has(k as GuardedKind)))
  ) {
    const problem = !PER_KIND.has(hook)
      ? 'but only request and response taps take it'
      : `that is not a list of ${[...GUARDED_KIND_SET].join(', ')}`;
    throw invalidTap(plugin, hook, `with \`kinds\` ${problem}`);
  }
  const early = opts.beforeArguments;
  if (early !== undefined && (typeof early !== 'boolean' || !BEFORE_ARGUMENTS.has(hook))) {
    const problem = typeof early !== 'boolean' ? 'that is not a boolean' : 'but only request and preCall taps take it';
    throw invalidTap(plugin, hook, `with \`beforeArguments\` ${problem}`);
  }
  return {
    name: opts.name,
    stage,
    before,
    tools: tools === undefined ? undefined : forTools(tools, plugin, hook),
    kinds: kinds === undefined ? undefined : new Set(kinds),
    beforeArguments: early === true,
  };
}

const GUARDED_KIND_SET: ReadonlySet<GuardedKind> = new Set(GUARDED_KINDS);

function invalidTap(plugin: string, hook: HookName, problem: string): SluiceError {
  return new SluiceError(CoreErrorCode.INVALID_TAP, `Plugin "${plugin}" tapped "${hook}" ${problem}`, { plugin, hook });
}

/** A tap's tool filter, asked once per tool: `true` means the tap is for it, a throw names the plugin. */
function forTools(tools: ToolFilter, plugin: string, hook: HookName): ToolFilter {
  return (tool) => {
    try {
      // Plugins may be plain JavaScript: only `true` takes the tool.
      return (tools(tool) as unknown) === true;
    } catch (error) {
      throw attribute(error, plugin, hook);
    }
  };
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
export function createPluginHooks(coreHooks: CoreHooks, options: FacadeOptions): PluginHooks {
  const { plugin, registry } = options;

  const register = (hook: HookName, tapOptions: TapArg, fn: AnyFn, kind: 'tap' | 'tapPromise'): void => {
    if (registry.locked || registry.applying !== plugin) {
      throw new SluiceError(
        CoreErrorCode.HOOKS_LOCKED,
        `Plugin "${plugin}" tapped "${hook}" outside apply(): hooks are tapped only while the server applies its plugins, never after it starts`,
        { plugin, hook },
      );
    }
    if (typeof fn !== 'function') throw invalidTap(plugin, hook, 'without a function');
    const { name, stage, before, tools, kinds: asked, beforeArguments } = normalize(tapOptions, plugin, hook);
    const adapter = hook in ADAPTERS ? ADAPTERS[hook as AdapterHookName] : undefined;
    for (const ref of before) registry.references.push({ plugin, hook, before: ref });
    registry.tapNames.add(name);
    const place = (
      core: CoreHookName,
      kinds: ReadonlySet<GuardedKind> | undefined,
      tapFn: AnyFn,
      refusing: boolean,
    ) => {
      const wrapped = kind === 'tap' ? wrapSync(hook, tapFn, refusing) : wrapPromise(hook, tapFn, refusing);
      // An audited refusing tap keeps its wrapper: the wrapper is what turns its refusals into log lines.
      const direct = kind === 'tap' && PER_TOOL.has(hook) && !(refusing && options.audit);
      // tapable reads `before` as a name or an array of names; its typings only say a name.
      const tapArgs: RawTap = {
        name,
        stage,
        ...(before.length > 0 ? { before: before as unknown as string } : {}),
        ...(tools === undefined ? {} : { tools }),
        ...(kinds === undefined ? {} : { kinds }),
        ...(beforeArguments ? { beforeArguments: true as const } : {}),
        ...(direct ? { direct: { fn: tapFn, plugin, hook } } : {}),
      };
      const target: RawHook = coreHooks[core];
      // The facade checked the tap's kind against the hook; its arguments and result are the hook's own.
      if (kind === 'tap') target.tap(tapArgs, wrapped as RawTapFn);
      else target.tapPromise?.(tapArgs, wrapped as RawTapFn);
    };
    const tapFn = hook === 'featureResult' ? adaptFeatureResult(fn, plugin) : fn;
    place(adapter?.core ?? (hook as CoreHookName), adapter?.kinds ?? asked, tapFn, REFUSING.has(hook));
    // A featureAccess tap decides requests on the one path, as a `request` tap for every kind but tool calls.
    if (hook === 'featureAccess') place('request', FEATURE_REQUESTS, adaptFeatureAccess(fn, plugin), true);
  };

  // Every core hook takes at most two arguments: fixed-arity wrappers allocate nothing per call.
  type TwoArgs = (a: never, b: never) => unknown;

  const wrapSync = (hook: HookName, fn: AnyFn, refusing: boolean): AnyFn => {
    if (hook === 'execute') return wrapExecuteTap(fn as ExecuteTap);
    if (hook === 'guard') return wrapGuardTap(fn as GuardTap);
    const tapFn: TwoArgs = fn;
    const onResult = (result: unknown) => attributeRefusal(result, plugin);
    const onError = (error: unknown): never => {
      throw attribute(error, plugin, hook);
    };
    // preCall and postCall taps may answer with a promise on the calls where they must wait.
    const guarded: TwoArgs =
      ANSWERING.has(hook) || refusing
        ? (a, b) => {
            try {
              const out = tapFn(a, b);
              return isThenable(out) ? Promise.resolve(out).then(onResult, onError) : attributeRefusal(out, plugin);
            } catch (error) {
              throw attribute(error, plugin, hook);
            }
          }
        : (a, b) => {
            try {
              return tapFn(a, b);
            } catch (error) {
              throw attribute(error, plugin, hook);
            }
          };
    return refusing && options.audit ? auditPreCall(guarded as PreCallTap) : guarded;
  };

  // One `then` per call, with handlers made once per tap: no async function frame, no extra await.
  const wrapPromise = (hook: HookName, fn: AnyFn, refusing: boolean): AnyFn => {
    const tapFn: TwoArgs = fn;
    const onResult = ANSWERING.has(hook) ? (result: unknown) => attributeRefusal(result, plugin) : undefined;
    const onError = (error: unknown): never => {
      throw attribute(error, plugin, hook);
    };
    const guarded: TwoArgs = (a, b) => {
      let out: unknown;
      try {
        out = tapFn(a, b);
      } catch (error) {
        return Promise.reject(attribute(error, plugin, hook));
      }
      return Promise.resolve(out).then(onResult, onError);
    };
    return refusing && options.audit ? auditPreCall(guarded as PreCallTap) : guarded;
  };

  // A refusal in audit mode becomes a log line; the call goes on.
  type PreCallTap = (ctx: RequestContext) => unknown;
  const auditPreCall = (fn: PreCallTap): PreCallTap => {
    const report = (result: unknown, ctx: RequestContext): undefined => {
      if (result !== undefined) {
        const code = readRefusalCode(result);
        if (ctx.kind === 'tools/call')
          ctx.logger.warn(
            { event: 'audit.refusal', plugin, tool: (ctx as CallContext).tool.name, code },
            `audit: ${plugin} would have refused this call`,
          );
        else
          ctx.logger.warn(
            { event: 'audit.refusal', plugin, kind: ctx.kind, target: ctx.target, code },
            `audit: ${plugin} would have refused this ${ctx.kind}`,
          );
      }
      return undefined;
    };
    return (ctx) => {
      const out = fn(ctx);
      if (out instanceof Promise) return out.then((r) => report(r, ctx));
      report(out, ctx);
      return undefined;
    };
  };

  type ExecuteTap = (next: Executor, tool: SluiceTool) => Executor;
  type GuardTap = (next: RequestExecutor, target: RequestTarget) => RequestExecutor;
  const wrapExecuteTap = (fn: ExecuteTap): ExecuteTap => wrapWrapper(fn, 'execute', (tool) => `tool "${tool.name}"`);
  // A guard wraps executors as `execute` does, with the same attribution; only what it plans for differs.
  // A feature request's upstream answers a failure by throwing its own protocol error (a tool's upstream answers
  // with a result): that error passes through a wrapper that awaited it, as the upstream gave it.
  const wrapGuardTap = (fn: GuardTap): GuardTap =>
    wrapWrapper(
      fn,
      'guard',
      (target) =>
        target.kind === 'tools/call'
          ? `tool "${target.tool.name}"`
          : `${target.kind} of "${target.upstream ?? 'local'}"`,
      (target) => target.kind !== 'tools/call',
    );
  const wrapWrapper =
    <C, R, T>(
      fn: (next: (ctx: C) => Promise<R>, target: T) => (ctx: C) => Promise<R>,
      hook: 'execute' | 'guard',
      describe: (target: T) => string,
      passesInnerErrors: (target: T) => boolean = () => false,
    ) =>
    (next: (ctx: C) => Promise<R>, target: T): ((ctx: C) => Promise<R>) => {
      type Run = (ctx: C) => Promise<R>;
      // What the inner executor last returned. A wrapper that hands it back unchanged (it only looked at the call)
      // passes on nothing of its own: the inner plugin's wrapper attributed its refusals and errors already, and
      // the tool's own executor's are the tool's or the core's. Such a wrapper needs no `then` here.
      let passed: Promise<R> | undefined;
      // The inner executor's errors, when they pass through unattributed (marked before the wrapper sees them).
      const fromInner = passesInnerErrors(target) ? new WeakSet<object>() : undefined;
      const inner: Run =
        fromInner === undefined
          ? (ctx) => (passed = next(ctx))
          : (ctx) => {
              const running = (passed = next(ctx));
              running.catch((error: unknown) => {
                if (typeof error === 'object' && error !== null) fromInner.add(error);
              });
              return running;
            };
      let built: Run;
      try {
        built = fn(inner, target);
      } catch (error) {
        throw attribute(error, plugin, hook);
      }
      if (built === inner || built === next) return next; // the plugin does not apply to this target: zero cost
      if (typeof built !== 'function') {
        throw new SluiceError(
          CoreErrorCode.INVALID_TAP,
          `Plugin "${plugin}" returned a non-function executor for ${describe(target)}`,
          { plugin, hook },
        );
      }
      const onError = (error: unknown): never => {
        if (fromInner !== undefined && error instanceof Object && fromInner.has(error)) throw error as Error;
        throw attribute(error, plugin, hook);
      };
      const onResult = (result: R): R => attributeRefusal(result, plugin) as R;
      const wrapped: Run = (ctx) => {
        let running: Promise<R>;
        try {
          running = built(ctx);
        } catch (error) {
          passed = undefined;
          return Promise.reject(attribute(error, plugin, hook));
        }
        // Assigned after the inner call returned, so a nested call of the same tool made meanwhile cannot mix them up.
        const through = running === passed;
        passed = undefined;
        return through ? running : running.then(onResult, onError);
      };
      return wrapped;
    };

  const facades: Partial<Record<HookName, Readonly<RawFacade>>> = {};
  for (const hook of HOOK_NAMES) {
    const coreName = hook in ADAPTERS ? ADAPTERS[hook as AdapterHookName].core : (hook as CoreHookName);
    const target = coreHooks[coreName];
    const base: RawFacade = {
      tap: (o: TapArg, fn: AnyFn) => register(hook, o, fn, 'tap'),
      isUsed: () => target.isUsed(),
    };
    if (HOOKS[coreName].async) base.tapPromise = (o: TapArg, fn: AnyFn) => register(hook, o, fn, 'tapPromise');
    facades[hook] = Object.freeze(base);
  }
  return Object.freeze(facades as PluginHooks);
}

/** Whether a tap answered with a promise (or any thenable) to wait for. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * A `featureResult` tap as a `response` tap: it is given `{ method, result }`
 * and must hand back an answer of the same method; its answer's `result` goes on.
 */
function adaptFeatureResult(fn: AnyFn, plugin: string): AnyFn {
  const tapFn = fn as (answer: FeatureResult, ctx: FeatureContext) => FeatureResult | Promise<FeatureResult>;
  const unwrap = (method: string, answer: FeatureResult): unknown => {
    if ((answer as Partial<FeatureResult> | undefined)?.method !== method)
      throw new SluiceError(CoreErrorCode.PLUGIN_FAILED, `A featureResult tap changed a ${method} answer`, {
        plugin,
        hook: 'featureResult',
      });
    return answer.result;
  };
  return (result: unknown, ctx: RequestContext) => {
    const method = ctx.kind as FeatureResult['method'];
    const answer = tapFn({ method, result } as FeatureResult, ctx as unknown as FeatureContext);
    return isThenable(answer) ? Promise.resolve(answer).then((a) => unwrap(method, a)) : unwrap(method, answer);
  };
}

/**
 * A `featureAccess` tap as a `request` tap: the request's context is the
 * feature context it was written for, and a reason it gives hides the item
 * (`NOT_FOUND`), as the handlers did before they asked `request` alone.
 */
function adaptFeatureAccess(fn: AnyFn, plugin: string): AnyFn {
  const tapFn = fn as (ctx: FeatureContext) => string | undefined;
  return (ctx: RequestContext) => {
    const feature = ctx as unknown as FeatureContext;
    // A feature request's context carries its method as `kind`, and the feature context's fields beside it.
    const method = ctx.kind as FeatureContext['method'];
    const reason = tapFn(feature.method === method ? feature : { ...feature, method });
    if (reason === undefined) return undefined;
    return attributeRefusal(refusal({ code: CoreErrorCode.NOT_FOUND, message: `Not found: ${reason}` }), plugin);
  };
}

function readRefusalCode(result: unknown): string | undefined {
  const meta = (result as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const error = meta?.['dev.sluice/error'] as { code?: unknown } | undefined;
  return typeof error?.code === 'string' ? error.code : undefined;
}
