import { Stage, definePlugin, parseOptions } from '@sluice/core';
import type { Executor, Plugin, PluginMode, RequestExecutor, SluiceTool, Store } from '@sluice/core';
import { auditMutexExecutor, mutexExecutor } from './intent-mutex.js';
import { auditLimitExecutor, limitExecutor } from './limiter.js';
import { rateExecutor } from './rate.js';
import type { ConcurrencyOptions, Limit } from './options.js';
import { ConcurrencyOptions as ConcurrencyOptionsSchema } from './options.js';
import type { ToolGuard } from './settings.js';
import { GuardSettings } from './settings.js';
import { compileTargets, routeByTarget, targetLimitsOf } from './targets.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'concurrency';

/**
 * Wraps one tool's executor. The semaphore is the outer guard, the mutex
 * the inner one: every call that waits for its action's turn already holds
 * a slot, so the limit bounds everything that waits, shedding stays exact,
 * and the lock's line can never outgrow the tool's slots.
 */
function guard(
  next: Executor,
  tool: SluiceTool,
  settings: ToolGuard,
  store: Store,
  mode: PluginMode,
  retryAfterMs: number,
): Executor {
  const audit = mode === 'audit';
  let executor = next;
  if (settings.keyArgs !== undefined) {
    const spec = { store, tool: tool.name, keyArgs: settings.keyArgs, retryAfterMs };
    executor = audit ? auditMutexExecutor(executor, spec) : mutexExecutor(executor, spec);
  }
  if (settings.limit !== undefined) {
    const spec = { store, tool: tool.name, limit: settings.limit, retryAfterMs };
    executor = audit ? auditLimitExecutor(executor, spec) : limitExecutor(executor, spec);
    executor = rateExecutor(executor, spec, audit);
  }
  return executor;
}

/**
 * The concurrency guard: per-tool limits with a FIFO backpressure queue and
 * load shedding, and an intent mutex that serializes destructive calls per
 * action. Both live in the server's store, so a shared store makes them
 * hold across replicas.
 */
export function concurrency(options: ConcurrencyOptions = {}): Plugin {
  const config = parseOptions(PLUGIN_NAME, ConcurrencyOptionsSchema, options);
  const settings = new GuardSettings(config, PLUGIN_NAME);
  return definePlugin({
    name: PLUGIN_NAME,
    version: VERSION,
    mode: config.mode,
    apply({ hooks, logger, services, mode }) {
      // Resolved at the first registration, after every plugin had its say on the store.
      let store: Store | undefined;
      const targets = compileTargets(config);
      const audit = mode === 'audit';
      // One mechanism admits every request kind: the `guard` wrappers of the one request path, at THROTTLE (the
      // stage the gateway's admission metric brackets). Tool calls per tool, planned once as each is registered.
      hooks.guard.tap({ name: PLUGIN_NAME, stage: Stage.THROTTLE }, (next, target) => {
        if (target.kind === 'tools/call') {
          const { tool } = target;
          const toolGuard = settings.resolve(tool);
          if (toolGuard === undefined) return next;
          store ??= services.store;
          logger.debug(
            { event: 'concurrency.guarded', tool: tool.name, limit: toolGuard.limit, keyArgs: toolGuard.keyArgs },
            `guarding "${tool.name}"`,
          );
          // A tool call's context is its CallContext, and its answer a tool result.
          return guard(next as Executor, tool, toolGuard, store, mode, config.retryAfterMs) as RequestExecutor;
        }
        // Every other kind: the same slots, queue and rate, one set per kind and upstream, and one per resource
        // glob or prompt selector that has a setting of its own. An unsubscribe only gives something back.
        if (target.kind === 'resources/unsubscribe') return next;
        const setting = config.requests[target.kind];
        const kindLimit = setting === false ? undefined : (setting ?? config.default);
        const perTarget = targetLimitsOf(targets, target);
        if (kindLimit === undefined && perTarget.length === 0) return next;
        const upstream = target.upstream ?? 'local';
        const limited = (limit: Limit, slots: string, subject: string): RequestExecutor => {
          store ??= services.store;
          const spec = { store, tool: slots, subject, limit, retryAfterMs: config.retryAfterMs };
          return rateExecutor(audit ? auditLimitExecutor(next, spec) : limitExecutor(next, spec), spec, audit);
        };
        const kind =
          kindLimit === undefined
            ? next
            : limited(kindLimit, `${target.kind} ${upstream}`, `${target.kind} on upstream "${upstream}"`);
        if (perTarget.length === 0) return kind;
        const routes = perTarget.map(({ key, matches, limit }) => ({
          matches,
          run:
            limit === false
              ? kind
              : limited(
                  limit,
                  `${target.kind} ${upstream} ${key}`,
                  `${target.kind} of "${key}" on upstream "${upstream}"`,
                ),
        }));
        return routeByTarget(routes, kind);
      });
    },
  });
}
