import { CoreErrorCode, RpcCode, SluiceError } from '@sluice/core';
import type { CallContext, CallToolResult, Logger } from '@sluice/core';
import { ChainState } from './chain-state.js';
import type { ChainStop } from './chain-stop.js';
import { stops } from './chain-stop.js';
import type { NextTool } from './directive.js';
import type { ChainDriver, ChainObserver } from './follow-chain.js';
import { followChain } from './follow-chain.js';
import type { ChainingConfig } from './options.js';
import type { ChainCatalog } from './tool-catalog.js';

/** A chain this plugin is running, kept in the state of the call that started it. */
interface ChainRun {
  readonly state: ChainState;
  /** The tool of the chained call in flight, whose directive the loop reads itself. */
  current: string | undefined;
}

const RUN = Symbol('dev.sluice/chaining.run');

const runOf = (ctx: CallContext): ChainRun | undefined => ctx.state.get(RUN) as ChainRun | undefined;

/** A chained call of a chain in progress: the chain's loop reads its directive, so it must not start another. */
export function isChainStep(ctx: CallContext): boolean {
  const run = ctx.parent === undefined ? undefined : runOf(ctx.parent);
  return run !== undefined && run.current === ctx.tool.name;
}

/** The chain, if any, whose step (directly or through handlers) made this call. */
function enclosingState(ctx: CallContext): ChainState | undefined {
  for (let call = ctx.parent; call !== undefined; call = call.parent) {
    const run = runOf(call);
    if (run) return run.state;
  }
  return undefined;
}

export function startState(config: ChainingConfig, ctx: CallContext): ChainState {
  return new ChainState(ctx.tool.name, ctx.arguments, config.maxDepth, enclosingState(ctx));
}

export async function runChain(
  config: ChainingConfig,
  catalog: ChainCatalog,
  logger: Logger,
  ctx: CallContext,
  result: CallToolResult,
): Promise<CallToolResult> {
  const run: ChainRun = { state: startState(config, ctx), current: undefined };
  ctx.state.set(RUN, run);
  const driver: ChainDriver = {
    state: run.state,
    target: (name, from) => catalog.target(name, from),
    continues: (name) => catalog.continues(name),
    call: (next) => {
      // Stays set until the next step: only this chain calls through `ctx` once its handler has returned.
      run.current = next.tool;
      return ctx.call(next.tool, next.arguments);
    },
    stopFor: failureStop,
    signal: ctx.signal,
    observer: observer(logger, ctx),
  };
  try {
    return await followChain(driver, { tool: ctx.tool.name, result });
  } finally {
    ctx.state.delete(RUN);
  }
}

/**
 * A chained call that threw: an unknown tool (removed since registration) or
 * another -32602 stops the chain with a result, since the caller's own
 * request was fine; anything else (a plugin bug, a cancellation) propagates.
 */
function failureStop(error: unknown, next: NextTool): ChainStop | undefined {
  if (!SluiceError.is(error)) return undefined;
  if (error.code === CoreErrorCode.UNKNOWN_TOOL) return stops.unknownTool(next);
  if (error.rpcCode === RpcCode.INVALID_PARAMS) return stops.rejected(next, error.message);
  return undefined;
}

/** Logs through the plugin's logger: a per-call child logger would cost more than the chain's own work. */
function observer(logger: Logger, ctx: CallContext): ChainObserver {
  const origin = ctx.tool.name;
  const requestId = ctx.requestId;
  const stopped: ChainObserver['stopped'] = (stop, state) =>
    logger.warn(
      {
        event: 'chain.stopped',
        origin,
        requestId,
        code: stop.code,
        tool: stop.pending?.tool,
        steps: state.steps.length,
      },
      `chain stopped: ${stop.message}`,
    );
  if (!logger.isLevelEnabled('debug')) return { stopped };
  return {
    stopped,
    step: (step, state) =>
      logger.debug(
        { event: 'chain.step', origin, requestId, ...step, depth: state.depth },
        `chained call to ${step.tool}: ${step.outcome}`,
      ),
  };
}
