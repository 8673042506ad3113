import { context } from '@opentelemetry/api';
import { Stage, definePlugin } from '@sluice/core';
import type { CallContext, Executor, Outcome, Plugin, PluginHooks, RequestExecutor, SluiceTool } from '@sluice/core';
import type { GatewayMetrics, ToolMetrics } from './call-metrics.js';
import type { CallSpan } from './call-span.js';
import { endCallSpan, startCallSpan } from './call-span.js';
import { VERSION } from './version.js';

export const TELEMETRY_PLUGIN_NAME = 'gateway-telemetry';

export interface TelemetryOptions {
  /** Where call metrics go; absent collects none. */
  readonly metrics?: GatewayMetrics;
  /** A span per call (recorded only when an OpenTelemetry SDK is registered). */
  readonly tracing: boolean;
  /**
   * Count calls waiting at the `THROTTLE` stage (the concurrency plugin's
   * queue and intent mutex) in `sluice_calls_queued`.
   */
  readonly watchAdmission?: boolean;
}

/** What the gateway keeps about one running call. */
interface CallRecord {
  readonly span: CallSpan | undefined;
  /** The tool's metric series. */
  readonly metrics: ToolMetrics | undefined;
  /** Between reaching admission control and being admitted (or turned away). */
  waiting: boolean;
  /** Counted in `sluice_calls_queued`: still waiting once admission control returned. */
  counted: boolean;
}

/**
 * The gateway's observer: opens a span when a call enters `preCall` (first of
 * all taps), makes it the active span around the executor (so the upstream
 * hop's span is its child), and closes it in `settled`, where the call's
 * metrics are recorded too.
 */
export function telemetry(options: TelemetryOptions): Plugin {
  const { metrics, tracing } = options;
  const calls = new WeakMap<CallContext, CallRecord>();

  const begin = (ctx: CallContext): undefined => {
    const parent = ctx.parent ? calls.get(ctx.parent)?.span : undefined;
    const series = metrics?.forTool(ctx.tool.name);
    calls.set(ctx, {
      span: tracing ? startCallSpan(ctx, parent) : undefined,
      metrics: series,
      waiting: false,
      counted: false,
    });
    if (series) series.inFlight.value++;
    return undefined;
  };

  const end = (ctx: CallContext, outcome: Outcome): void => {
    const record = calls.get(ctx);
    if (record) {
      calls.delete(ctx);
      if (record.metrics) {
        record.metrics.inFlight.value--;
        record.metrics.settled(outcome);
      }
      if (record.span) endCallSpan(record.span, outcome);
      return;
    } else if (tracing) {
      // Refused before preCall (invalid arguments): still one span per call.
      const span = startCallSpan(ctx, ctx.parent ? calls.get(ctx.parent)?.span : undefined);
      if (span) endCallSpan(span, outcome);
    }
    metrics?.settled(ctx.tool.name, outcome);
  };

  const activate =
    (next: Executor): Executor =>
    (ctx) => {
      const span = calls.get(ctx)?.span;
      return span ? context.with(span.context, next, undefined, ctx) : next(ctx);
    };

  // What stops following each server's catalog, on close.
  const unfollow: (() => void)[] = [];
  return definePlugin({
    name: TELEMETRY_PLUGIN_NAME,
    version: VERSION,
    apply({ hooks, tools }) {
      if (!metrics && !tracing) return;
      // A tool's series go with the tool, so the tool labels are those of the tools exposed now.
      if (metrics) unfollow.push(metrics.follow(tools));
      hooks.preCall.tap({ name: TELEMETRY_PLUGIN_NAME, stage: Stage.FIRST }, begin);
      if (tracing) hooks.execute.tap({ name: TELEMETRY_PLUGIN_NAME, stage: Stage.LAST }, activate);
      if (metrics && options.watchAdmission) watchAdmission(hooks, calls);
      hooks.settled.tap({ name: TELEMETRY_PLUGIN_NAME, stage: Stage.LAST }, end);
    },
    close() {
      for (const stop of unfollow.splice(0)) stop();
    },
  });
}

/**
 * Brackets the `THROTTLE` stage of the `guard` hook, where the concurrency
 * plugin admits every request kind, with a wrapper just outside it and one
 * just inside: a tool call between the two is waiting for admission. A tool
 * that no plugin guards at that stage gets both wrappers removed again, at
 * no cost; requests of other kinds are not counted here (the gauge is by tool).
 */
function watchAdmission(hooks: PluginHooks, calls: WeakMap<CallContext, CallRecord>): void {
  const inner = new WeakMap<SluiceTool, { readonly wrapped: RequestExecutor; readonly base: RequestExecutor }>();
  hooks.guard.tap({ name: TELEMETRY_PLUGIN_NAME, stage: Stage.THROTTLE - 1 }, (next, target) => {
    if (target.kind !== 'tools/call') return next;
    const wrapped: RequestExecutor = (ctx) => {
      const record = calls.get(ctx as CallContext);
      if (record?.waiting) {
        record.waiting = false;
        if (record.counted) {
          record.counted = false;
          leftQueue(record);
        }
      }
      return next(ctx);
    };
    inner.set(target.tool, { wrapped, base: next });
    return wrapped;
  });
  hooks.guard.tap({ name: TELEMETRY_PLUGIN_NAME, stage: Stage.THROTTLE + 1 }, (next, target) => {
    if (target.kind !== 'tools/call') return next;
    const mine = inner.get(target.tool);
    if (mine !== undefined && next === mine.wrapped) return mine.base;
    return (ctx) => {
      const record = calls.get(ctx as CallContext);
      if (record === undefined) return next(ctx);
      record.waiting = true;
      const running = next(ctx);
      // Admitted at once (the inner wrapper ran before `next` returned): it never waited, so the gauge never moves.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- `next` ran the inner wrapper, which may have cleared it
      if (!record.waiting) return running;
      record.counted = true;
      if (record.metrics) record.metrics.queued.value++;
      return running.finally(() => {
        // Shed, or cancelled while waiting: it leaves the line without being admitted.
        if (!record.waiting) return;
        record.waiting = false;
        record.counted = false;
        leftQueue(record);
      });
    };
  });
}

/** A counted call stops waiting: out of its tool's `sluice_calls_queued`, the series it was counted in. */
function leftQueue(record: CallRecord): void {
  if (record.metrics) record.metrics.queued.value--;
}
