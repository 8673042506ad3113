import type { CallContext, Executor, Outcome } from './context.js';
import { CoreErrorCode, RpcCode, SluiceError, messageOf } from './errors.js';
import type { CoreHooks, PreCallAnswer } from './hooks.js';
import { isThenable } from './hooks.js';
import type { Logger } from './logger.js';
import type { CallToolResult } from './protocol.js';
import { isInputRequired } from './protocol.js';
import { attributeRefusal, isRefusal, readRefusal, refusal } from './refusal.js';
import type { CompiledSchema, ValidationResult } from './schema.js';
import type { SluiceTool } from './tool.js';

/** A tool ready to be called: its frozen description and its composed executor. */
export interface RegisteredTool {
  readonly tool: SluiceTool;
  readonly executor: Executor;
  /** Validates arguments before `preCall`; absent for tools whose upstream validates. */
  readonly input: CompiledSchema | undefined;
}

/** A `preCall` tap as the facade wrapped it: an answer, nothing, or a promise of either. */
type PreCallFn = (ctx: CallContext) => PreCallAnswer | Promise<PreCallAnswer>;
/** A `postCall` tap as the facade wrapped it: a result (undefined keeps the one it was given), or a promise of one. */
type PostCallFn = (result: CallToolResult, ctx: CallContext) => CallToolResult | undefined | Promise<CallToolResult>;

/** The tap functions of a hook, in the order tapable sorted them (stages, `before`). */
function tapFunctions(hook: { readonly taps: readonly { readonly fn: unknown }[] }): readonly unknown[] {
  return Object.freeze(hook.taps.map((tap) => tap.fn));
}

/**
 * Runs calls through the hooks. Which hooks are tapped is read once, when the
 * hooks are locked, so an untapped hook costs a boolean test per call.
 * `preCall` and `postCall` taps run here, in tapable's order, rather than
 * through tapable's generated promise chain: a tap that answers at once
 * costs a function call, and only a tap that returns a promise is awaited.
 */
export class Pipeline {
  private readonly preCallTaps: readonly PreCallFn[];
  private readonly postCallTaps: readonly PostCallFn[];
  private readonly preCallUsed: boolean;
  private readonly postCallUsed: boolean;
  private readonly settledUsed: boolean;
  private readonly executeUsed: boolean;
  readonly listToolsUsed: boolean;
  readonly importUsed: boolean;

  constructor(
    readonly hooks: CoreHooks,
    private readonly logger: Logger,
  ) {
    this.preCallTaps = tapFunctions(hooks.preCall) as readonly PreCallFn[];
    this.postCallTaps = tapFunctions(hooks.postCall) as readonly PostCallFn[];
    this.preCallUsed = this.preCallTaps.length > 0;
    this.postCallUsed = this.postCallTaps.length > 0;
    this.settledUsed = hooks.settled.isUsed();
    this.executeUsed = hooks.execute.isUsed();
    this.listToolsUsed = hooks.listTools.isUsed();
    this.importUsed = hooks.import.isUsed();
  }

  /** Composes a tool's executor once, at registration. */
  compose(base: Executor, tool: SluiceTool): Executor {
    return this.executeUsed ? this.hooks.execute.call(base, tool) : base;
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

  async run(entry: RegisteredTool, ctx: CallContext): Promise<CallToolResult> {
    // Timing and outcomes exist for `settled`; without observers they are not built.
    const observed = this.settledUsed;
    const started = observed ? performance.now() : 0;
    let outcome: Outcome | undefined;
    this.inflight++;
    try {
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
      if (this.preCallUsed) {
        let answered = this.preCall(ctx);
        if (isThenable(answered)) answered = await answered;
        if (answered !== undefined) {
          // An input-required answer (see `CoreHooks.preCall`) goes back to the SDK as it is.
          const refused = answered as CallToolResult;
          const code =
            readRefusal(refused)?.code ?? (refused.resultType === 'input_required' ? 'INPUT_REQUIRED' : 'REFUSED');
          if (observed) outcome = { status: 'refused', code, result: refused, durationMs: performance.now() - started };
          return refused;
        }
      }
      let result = await entry.executor(ctx);
      // An input-required answer is a question for the client, not a result to rewrite.
      if (this.postCallUsed && !isInputRequired(result)) {
        const rewritten = this.postCall(result, ctx);
        result = isThenable(rewritten) ? await rewritten : rewritten;
      }
      if (observed) outcome = settledOutcome(result, performance.now() - started);
      return result;
    } catch (error) {
      const failure = this.failure(error, ctx);
      if (observed) {
        const durationMs = performance.now() - started;
        outcome =
          failure.code === CoreErrorCode.CANCELLED
            ? { status: 'cancelled', durationMs }
            : { status: 'error', error: failure, durationMs };
      }
      throw failure;
    } finally {
      if (outcome !== undefined) this.settle(ctx, outcome);
      if (--this.inflight === 0) this.onDrained?.();
    }
  }

  /**
   * The `preCall` taps in order until one answers. A tap that answers at
   * once is not awaited: when none returns a promise, neither does this. A
   * promise that settles to nothing goes on to the next tap, whichever way
   * the tap was registered.
   */
  private preCall(ctx: CallContext): PreCallAnswer | Promise<PreCallAnswer> {
    const taps = this.preCallTaps;
    for (let i = 0; i < taps.length; i++) {
      const answered = (taps[i] as PreCallFn)(ctx);
      if (isThenable(answered)) return this.preCallFrom(i, answered, ctx);
      if (answered !== undefined) return answered;
    }
    return undefined;
  }

  private async preCallFrom(at: number, pending: Promise<PreCallAnswer>, ctx: CallContext): Promise<PreCallAnswer> {
    let answered = await pending;
    const taps = this.preCallTaps;
    for (let i = at + 1; answered === undefined && i < taps.length; i++) answered = await (taps[i] as PreCallFn)(ctx);
    return answered;
  }

  /** The `postCall` taps in order, each given the result the one before left (a waterfall). */
  private postCall(result: CallToolResult, ctx: CallContext): CallToolResult | Promise<CallToolResult> {
    const taps = this.postCallTaps;
    let current = result;
    for (let i = 0; i < taps.length; i++) {
      const next = (taps[i] as PostCallFn)(current, ctx);
      if (isThenable(next)) return this.postCallFrom(i, next, current, ctx);
      if (next !== undefined) current = next;
    }
    return current;
  }

  private async postCallFrom(
    at: number,
    pending: Promise<CallToolResult | undefined>,
    result: CallToolResult,
    ctx: CallContext,
  ): Promise<CallToolResult> {
    let current = (await pending) ?? result;
    const taps = this.postCallTaps;
    for (let i = at + 1; i < taps.length; i++) current = (await (taps[i] as PostCallFn)(current, ctx)) ?? current;
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

  private settle(ctx: CallContext, outcome: Outcome): void {
    try {
      this.hooks.settled.call(ctx, outcome);
    } catch (error) {
      // An observer must never change how a call ends; its failure is still a bug to see.
      const plugin = SluiceError.is(error) ? error.plugin : undefined;
      ctx.logger.error(
        { event: 'plugin.failed', plugin, hook: 'settled', err: error },
        `settled observer failed: ${messageOf(error)}`,
      );
    }
  }
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
