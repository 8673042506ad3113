import type { CallContext, Executor, Outcome } from './context.js';
import { CoreErrorCode, RpcCode, SluiceError, attribute, messageOf, unknownTool } from './errors.js';
import type { CoreHooks, HookName, PreCallAnswer, ToolFilter } from './hooks.js';
import { isThenable } from './hooks.js';
import type { Logger } from './logger.js';
import type { CallToolResult } from './protocol.js';
import { isInputRequired } from './protocol.js';
import type { GuardedKind, RequestContext, RequestExecutor, RequestTarget } from './request.js';
import { attributeRefusal, isRefusal, readRefusal, refusal } from './refusal.js';
import type { CompiledSchema, ValidationResult } from './schema.js';
import type { SluiceTool } from './tool.js';

/** A tool ready to be called: its frozen description, its composed executor and the taps its calls run. */
export interface RegisteredTool {
  readonly tool: SluiceTool;
  readonly executor: Executor;
  /** Validates arguments before `preCall`; absent for tools whose upstream validates. */
  readonly input: CompiledSchema | undefined;
  readonly plan: CallPlan;
}

/** What a `request` (or `preCall`) tap may return: an answer, nothing, or a promise of either. */
type PreCallFn = (ctx: RequestContext) => PreCallAnswer | Promise<PreCallAnswer>;
/** What a `response` (or `postCall`) tap may return: a result (undefined keeps the one it was given), or a promise of one. */
type PostCallFn = <R>(result: R, ctx: RequestContext) => R | undefined | Promise<R>;
type SettledFn = (ctx: CallContext, outcome: Outcome) => void;
/** Any answer a `preCall` or `postCall` tap may give besides a tool result. */
type InputRequiredLike = Exclude<PreCallAnswer, CallToolResult | undefined>;
/** Maps how a call failed onto the error its client sees (a transport's request handler gives one). */
export type ToClientError = (error: unknown) => Error;

/**
 * A per-call tap as the pipeline runs it. A plugin's synchronous `tap` runs
 * as the plugin wrote it, and the pipeline names `plugin` in what it throws
 * or refuses: one function call per tap. Others (`tapPromise`, audited
 * `preCall`) run through the facade's wrapper, which names the plugin.
 */
interface PlannedTap<F> {
  readonly fn: F;
  /** Set when `fn` is the plugin's own function. */
  readonly plugin: string | undefined;
  /** The hook the plugin tapped (`request` or its adapter `preCall`, ...), named in what it throws. */
  readonly hook?: HookName;
}

/**
 * The per-call taps one tool's calls run, in tapable's order (stages,
 * `before`): those whose `tools` filter took the tool, or that have none.
 * A call with no `settled` tap is not timed and builds no outcome.
 */
export interface CallPlan {
  /** The `request` taps that run before the arguments are checked (`beforeArguments`). */
  readonly admit: readonly PlannedTap<PreCallFn>[];
  readonly preCall: readonly PlannedTap<PreCallFn>[];
  readonly postCall: readonly PlannedTap<PostCallFn>[];
  readonly settled: readonly PlannedTap<SettledFn>[];
}

/** A per-call tap as tapable keeps it (see the facade's `RawTap`). */
interface CallTap {
  readonly fn: unknown;
  readonly tools?: ToolFilter;
  readonly kinds?: ReadonlySet<GuardedKind>;
  readonly beforeArguments?: true;
  readonly direct?: { readonly fn: unknown; readonly plugin: string; readonly hook: HookName };
}

function callTaps(hook: { readonly taps: readonly CallTap[] }, kind?: GuardedKind): readonly CallTap[] {
  return Object.freeze(hook.taps.filter((tap) => kind === undefined || tap.kinds === undefined || tap.kinds.has(kind)));
}

/** A hook's taps split: those that run before the arguments are checked (`beforeArguments`), then the others. */
function splitEarly(taps: readonly CallTap[]): { early: readonly CallTap[]; late: readonly CallTap[] } {
  return {
    early: Object.freeze(taps.filter((tap) => tap.beforeArguments === true)),
    late: Object.freeze(taps.filter((tap) => tap.beforeArguments !== true)),
  };
}

/**
 * Whether a `request` tap's answer to a tool call hides the tool: a refusal
 * with the code `NOT_FOUND`, which the caller gets as a call of a tool that
 * does not exist.
 */
function hidesTool(answered: CallToolResult): boolean {
  return answered.isError === true && isRefusal(answered) && readRefusal(answered)?.code === CoreErrorCode.NOT_FOUND;
}

/** How a call that a `request` tap answered ended, as `settled` sees it. */
function refusedOutcome(refused: CallToolResult, durationMs: number): Outcome {
  const code = readRefusal(refused)?.code ?? (refused.resultType === 'input_required' ? 'INPUT_REQUIRED' : 'REFUSED');
  return { status: 'refused', code, result: refused, durationMs };
}

/** The taps for `tool` (every one when no tool is given), in order, as the pipeline runs them. */
function tapsFor(taps: readonly CallTap[], tool: SluiceTool | undefined): readonly PlannedTap<unknown>[] {
  return Object.freeze(
    taps
      .filter((tap) => tool === undefined || tap.tools === undefined || tap.tools(tool))
      .map((tap) => Object.freeze(tap.direct ?? { fn: tap.fn, plugin: undefined })),
  );
}

/** A guarded request's answer that is a refusal built by `refusal()`. */
function isRefusalAnswer(answer: unknown): boolean {
  return (
    typeof answer === 'object' &&
    answer !== null &&
    (answer as CallToolResult).isError === true &&
    isRefusal(answer as CallToolResult)
  );
}

/** Whether some `request`, `response` or `guard` tap may concern requests other than tool calls. */
export function requestsTapped(hooks: Pick<CoreHooks, 'request' | 'response' | 'guard'>): boolean {
  const forFeatures = (tap: CallTap) => tap.kinds === undefined || tap.kinds.size > 1 || !tap.kinds.has('tools/call');
  return (
    hooks.guard.isUsed() ||
    (hooks.request.taps as readonly CallTap[]).some(forFeatures) ||
    (hooks.response.taps as readonly CallTap[]).some(forFeatures)
  );
}

/**
 * The one request path of a request other than a tool call, planned once
 * per target (kind and upstream): the `request` taps for its kind, then the
 * `guard` wrappers around `inner`, then the `response` taps for its kind,
 * as a tool call meets them. With no tap for the kind it is `inner` itself,
 * or the guard wrappers alone: nothing runs per request that no plugin asked for.
 */
export function planRequest(
  hooks: Pick<CoreHooks, 'request' | 'response' | 'guard'>,
  target: Exclude<RequestTarget, { kind: 'tools/call' }>,
  inner: RequestExecutor,
): RequestExecutor {
  const guarded = hooks.guard.isUsed() ? hooks.guard.call(inner, target) : inner;
  // Taps that run before arguments are checked run first on every kind, as they do on tool calls.
  const { early, late } = splitEarly(callTaps(hooks.request, target.kind));
  const before = tapsFor([...early, ...late], undefined) as readonly PlannedTap<PreCallFn>[];
  const after = tapsFor(callTaps(hooks.response, target.kind), undefined) as readonly PlannedTap<PostCallFn>[];
  if (before.length === 0 && after.length === 0) return guarded;
  return async (ctx) => {
    for (const tap of before) {
      let answered = preCallOf(tap, ctx);
      if (isThenable(answered)) answered = await answered;
      // A refusal goes back as the request's answer; whoever runs the request turns it into the client's error.
      if (answered !== undefined) return answered;
    }
    let result = await guarded(ctx);
    if (after.length === 0 || isRefusalAnswer(result) || isInputRequired(result)) return result;
    for (const tap of after) {
      let next = postCallOf(tap, result, ctx);
      if (isThenable(next)) next = await next;
      if (next !== undefined) result = next;
    }
    return result;
  };
}

/** A promise a directly run tap returned, with what it refuses or throws naming its plugin. */
function attributed<T extends CallToolResult | InputRequiredLike | undefined>(
  pending: PromiseLike<T>,
  plugin: string,
  hook: HookName,
): Promise<T> {
  return Promise.resolve(pending).then(
    (result) => attributeRefusal(result as unknown, plugin) as T,
    (error: unknown) => {
      throw attribute(error, plugin, hook);
    },
  );
}

/**
 * Runs calls through the hooks. Which taps a tool's calls run is decided
 * once, when the tool is registered, so a hook with no tap for the tool
 * costs a length test per call. `preCall`, `postCall` and `settled` taps
 * run here, in tapable's order, rather than through tapable's generated
 * code: a tap that answers at once costs a function call, and only a tap
 * that returns a promise is awaited.
 */
export class Pipeline {
  private readonly admitTaps: readonly CallTap[];
  private readonly preCallTaps: readonly CallTap[];
  private readonly postCallTaps: readonly CallTap[];
  private readonly settledTaps: readonly CallTap[];
  /** The plan of every tool when no per-call tap names its tools: shared, not built per tool. */
  private readonly everyTool: CallPlan | undefined;
  private readonly executeUsed: boolean;
  private readonly guardUsed: boolean;
  readonly listToolsUsed: boolean;
  readonly importUsed: boolean;

  constructor(
    readonly hooks: CoreHooks,
    private readonly logger: Logger,
  ) {
    // A tool call meets the `request` and `response` taps for its kind (`preCall` and `postCall` are those).
    const { early, late } = splitEarly(callTaps(hooks.request, 'tools/call'));
    this.admitTaps = early;
    this.preCallTaps = late;
    this.postCallTaps = callTaps(hooks.response, 'tools/call');
    this.settledTaps = callTaps(hooks.settled);
    const filtered = [...early, ...late, ...this.postCallTaps, ...this.settledTaps].some((t) => t.tools);
    this.everyTool = filtered ? undefined : this.planFor(undefined);
    this.executeUsed = hooks.execute.isUsed();
    this.guardUsed = hooks.guard.isUsed();
    this.listToolsUsed = hooks.listTools.isUsed();
    this.importUsed = hooks.import.isUsed();
  }

  /** The per-call taps of a tool's calls, decided once, at registration. */
  plan(tool: SluiceTool): CallPlan {
    return this.everyTool ?? this.planFor(tool);
  }

  private planFor(tool: SluiceTool | undefined): CallPlan {
    return Object.freeze({
      admit: tapsFor(this.admitTaps, tool) as readonly PlannedTap<PreCallFn>[],
      preCall: tapsFor(this.preCallTaps, tool) as readonly PlannedTap<PreCallFn>[],
      postCall: tapsFor(this.postCallTaps, tool) as readonly PlannedTap<PostCallFn>[],
      settled: tapsFor(this.settledTaps, tool) as readonly PlannedTap<SettledFn>[],
    });
  }

  /** Composes a tool's executor once, at registration: `execute` wrappers inside, `guard` wrappers around them. */
  compose(base: Executor, tool: SluiceTool): Executor {
    const executed = this.executeUsed ? this.hooks.execute.call(base, tool) : base;
    if (!this.guardUsed) return executed;
    const upstream = tool.source.kind === 'upstream' ? tool.source.upstream : undefined;
    // A tool call's context is a request context, and a guard answers a tool call with a tool result or a refusal.
    return this.hooks.guard.call(executed as RequestExecutor, { kind: 'tools/call', tool, upstream }) as Executor;
  }

  /** Calls running now; `drain()` waits for them. */
  inflight = 0;
  /** Called when `inflight` drops to zero. */
  private onDrained: (() => void) | undefined;

  /** Resolves when no call runs, or after `timeoutMs` (logged) with calls still running. */
  drain(timeoutMs: number): Promise<void> {
    if (this.inflight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.logger.warn(
          { event: 'server.drain_timeout', inflight: this.inflight },
          'closing with calls still running',
        );
        resolve();
      }, timeoutMs);
      timer.unref();
      this.onDrained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Runs one call; a failure rejects with a `SluiceError`, or with what `toClient` makes of it. */
  async run(entry: RegisteredTool, ctx: CallContext, toClient?: ToClientError): Promise<CallToolResult> {
    const plan = entry.plan;
    // Timing and outcomes exist for `settled`; without observers they are not built.
    const observed = plan.settled.length > 0;
    const started = observed ? performance.now() : 0;
    let outcome: Outcome | undefined;
    this.inflight++;
    try {
      if (plan.admit.length > 0) {
        let answered = this.preCall(plan.admit, ctx);
        if (isThenable(answered)) answered = await answered;
        if (answered !== undefined) {
          const refused = answered as CallToolResult;
          if (observed) outcome = refusedOutcome(refused, performance.now() - started);
          // Hidden: the caller is answered as for a tool that does not exist (the outcome above stays the refusal).
          if (hidesTool(refused)) throw unknownTool(ctx.tool.name, 'call');
          return refused;
        }
      }
      if (entry.input) {
        const checked = entry.input.validate(ctx.arguments);
        const invalid = refuseInvalid(checked instanceof Promise ? await checked : checked, ctx);
        if (invalid) {
          if (observed)
            outcome = {
              status: 'refused',
              code: CoreErrorCode.INVALID_ARGUMENTS,
              result: invalid,
              durationMs: performance.now() - started,
            };
          return invalid;
        }
      }
      if (plan.preCall.length > 0) {
        let answered = this.preCall(plan.preCall, ctx);
        if (isThenable(answered)) answered = await answered;
        if (answered !== undefined) {
          // An input-required answer (see `CoreHooks.preCall`) goes back to the SDK as it is.
          const refused = answered as CallToolResult;
          if (observed) outcome = refusedOutcome(refused, performance.now() - started);
          if (hidesTool(refused)) throw unknownTool(ctx.tool.name, 'call');
          return refused;
        }
      }
      let result = await entry.executor(ctx);
      // An input-required answer is a question for the client, not a result to rewrite.
      if (plan.postCall.length > 0 && !isInputRequired(result)) {
        const rewritten = this.postCall(plan.postCall, result, ctx);
        result = isThenable(rewritten) ? await rewritten : rewritten;
      }
      if (observed) outcome = settledOutcome(result, performance.now() - started);
      return result;
    } catch (error) {
      const failure = this.failure(error, ctx);
      // A hidden tool's outcome is already the refusal that hid it.
      if (observed && outcome === undefined) {
        const durationMs = performance.now() - started;
        outcome =
          failure.code === CoreErrorCode.CANCELLED
            ? { status: 'cancelled', durationMs }
            : { status: 'error', error: failure, durationMs };
      }
      throw toClient === undefined ? failure : toClient(failure);
    } finally {
      if (outcome !== undefined) this.settle(plan.settled, ctx, outcome);
      if (--this.inflight === 0) this.onDrained?.();
    }
  }

  /**
   * The `preCall` taps in order until one answers. A tap that answers at
   * once is not awaited: when none returns a promise, neither does this. A
   * promise that settles to nothing goes on to the next tap, whichever way
   * the tap was registered.
   */
  private preCall(taps: readonly PlannedTap<PreCallFn>[], ctx: CallContext): PreCallAnswer | Promise<PreCallAnswer> {
    for (let i = 0; i < taps.length; i++) {
      const answered = preCallOf(taps[i] as PlannedTap<PreCallFn>, ctx);
      if (isThenable(answered)) return this.preCallFrom(taps, i, answered, ctx);
      if (answered !== undefined) return answered;
    }
    return undefined;
  }

  private async preCallFrom(
    taps: readonly PlannedTap<PreCallFn>[],
    at: number,
    pending: Promise<PreCallAnswer>,
    ctx: CallContext,
  ): Promise<PreCallAnswer> {
    let answered = await pending;
    for (let i = at + 1; answered === undefined && i < taps.length; i++)
      answered = await preCallOf(taps[i] as PlannedTap<PreCallFn>, ctx);
    return answered;
  }

  /** The `postCall` taps in order, each given the result the one before left (a waterfall). */
  private postCall(
    taps: readonly PlannedTap<PostCallFn>[],
    result: CallToolResult,
    ctx: CallContext,
  ): CallToolResult | Promise<CallToolResult> {
    let current = result;
    for (let i = 0; i < taps.length; i++) {
      const next = postCallOf(taps[i] as PlannedTap<PostCallFn>, current, ctx);
      if (isThenable(next)) return this.postCallFrom(taps, i, next, current, ctx);
      if (next !== undefined) current = next;
    }
    return current;
  }

  private async postCallFrom(
    taps: readonly PlannedTap<PostCallFn>[],
    at: number,
    pending: Promise<CallToolResult | undefined>,
    result: CallToolResult,
    ctx: CallContext,
  ): Promise<CallToolResult> {
    let current = (await pending) ?? result;
    for (let i = at + 1; i < taps.length; i++)
      current = (await postCallOf(taps[i] as PlannedTap<PostCallFn>, current, ctx)) ?? current;
    return current;
  }

  private failure(error: unknown, ctx: CallContext): SluiceError {
    if (ctx.signal.aborted && !(SluiceError.is(error) && error.rpcCode === RpcCode.INVALID_PARAMS)) {
      return new SluiceError(CoreErrorCode.CANCELLED, 'The call was cancelled', { cause: error, hook: 'call' });
    }
    if (SluiceError.is(error)) {
      if (error.code === CoreErrorCode.PLUGIN_FAILED || error.rpcCode === RpcCode.INTERNAL_ERROR) {
        ctx.logger.error(
          { event: 'plugin.failed', plugin: error.plugin, hook: error.hook, err: error.cause ?? error },
          error.message,
        );
      }
      return error;
    }
    this.logger.error({ event: 'call.failed', tool: ctx.tool.name, err: error }, 'call failed inside the core');
    return new SluiceError(CoreErrorCode.PLUGIN_FAILED, `Internal error: ${messageOf(error)}`, {
      rpcCode: RpcCode.INTERNAL_ERROR,
      hook: 'call',
      cause: error,
    });
  }

  /** Every observer sees the outcome, whatever another one did: an observer never changes how a call ends. */
  private settle(taps: readonly PlannedTap<SettledFn>[], ctx: CallContext, outcome: Outcome): void {
    for (const tap of taps) {
      try {
        tap.fn(ctx, outcome);
      } catch (thrown) {
        // Its failure is still a bug to see.
        const error = tap.plugin === undefined ? thrown : attribute(thrown, tap.plugin, 'settled');
        const plugin = SluiceError.is(error) ? error.plugin : undefined;
        ctx.logger.error(
          { event: 'plugin.failed', plugin, hook: 'settled', err: error },
          `settled observer failed: ${messageOf(error)}`,
        );
      }
    }
  }
}

/** One `request` tap's answer; a directly run tap's refusal or throw names its plugin. */
function preCallOf(tap: PlannedTap<PreCallFn>, ctx: RequestContext): PreCallAnswer | Promise<PreCallAnswer> {
  if (tap.plugin === undefined) return tap.fn(ctx);
  const hook = tap.hook ?? 'request';
  let answered: PreCallAnswer | Promise<PreCallAnswer>;
  try {
    answered = tap.fn(ctx);
  } catch (error) {
    throw attribute(error, tap.plugin, hook);
  }
  if (answered === undefined) return undefined;
  return isThenable(answered)
    ? attributed(answered, tap.plugin, hook)
    : (attributeRefusal(answered as unknown, tap.plugin) as PreCallAnswer);
}

/**
 * One `response` tap's result. A directly run tap's throw names its plugin,
 * and so does a refusal it built; a result it hands back unchanged is not its own.
 */
function postCallOf<R>(tap: PlannedTap<PostCallFn>, result: R, ctx: RequestContext): R | undefined | Promise<R> {
  if (tap.plugin === undefined) return tap.fn(result, ctx);
  const hook = tap.hook ?? 'response';
  let next: R | undefined | Promise<R>;
  try {
    next = tap.fn(result, ctx);
  } catch (error) {
    throw attribute(error, tap.plugin, hook);
  }
  if (next === undefined || next === result) return next;
  return isThenable(next)
    ? (attributed(next as PromiseLike<CallToolResult>, tap.plugin, hook) as Promise<R>)
    : (attributeRefusal(next, tap.plugin) as R);
}

/** A result a plugin's wrapper or tap built with `refusal()` is a refusal; anything else is the tool's. */
function settledOutcome(result: CallToolResult, durationMs: number): Outcome {
  if (result.isError && isRefusal(result))
    return { status: 'refused', code: readRefusal(result)?.code ?? 'REFUSED', result, durationMs };
  return { status: 'ok', result, durationMs };
}

/** Keeps the parsed arguments, or turns what is wrong into a result the model can act on. */
function refuseInvalid(checked: ValidationResult, ctx: CallContext): CallToolResult | undefined {
  if (checked.ok) {
    ctx.arguments = checked.value as Record<string, unknown>;
    return undefined;
  }
  const refused = refusal({
    code: CoreErrorCode.INVALID_ARGUMENTS,
    message: `Invalid arguments for tool "${ctx.tool.name}": ${checked.message}`,
    suggestion: "Check the arguments against the tool's input schema and call it again.",
  });
  return attributeRefusal(refused, 'core');
}
