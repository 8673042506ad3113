import { definePlugin } from '../plugin.js';
import type { Plugin } from '../plugin.js';
import { refusal } from '../refusal.js';
import type { GuardedKind, RequestContext } from '../request.js';
import { Stage } from '../stages.js';

/** One request a `requestRecorder()` saw. */
export interface SeenRequest {
  readonly kind: GuardedKind;
  /** The upstream that serves it; undefined for the server's own tools and handlers. */
  readonly upstream: string | undefined;
  /** The tool's name on a tool call, else the item the request names (a canonical URI, a prompt name). */
  readonly target: string | undefined;
  /** The verified caller's subject, when there is one. */
  readonly caller: string | undefined;
}

export interface RequestRecorderOptions {
  /** The plugin's name (default `request-recorder`). */
  readonly name?: string;
  /** Refuses the requests this returns true for, with the code `REFUSED_BY_RECORDER`. */
  readonly refuse?: (request: SeenRequest) => boolean;
}

/**
 * A plugin written once that sees every guarded request kind: tool calls,
 * resource reads and subscriptions, prompt gets and completions. It taps
 * the `guard` hook alone, records each request, and refuses those its
 * `refuse` option names; tests use it to show that a policy meets every kind.
 */
export function requestRecorder(options: RequestRecorderOptions = {}): { plugin: Plugin; seen: SeenRequest[] } {
  const name = options.name ?? 'request-recorder';
  const seen: SeenRequest[] = [];
  const plugin = definePlugin({
    name,
    version: '1.0.0',
    apply({ hooks }) {
      // #region guard
      hooks.guard.tap({ name, stage: Stage.FILTER }, (next, target) => {
        const tool = target.kind === 'tools/call' ? target.tool.name : undefined;
        return (ctx: RequestContext) => {
          const request: SeenRequest = {
            kind: target.kind,
            upstream: target.upstream,
            target: tool ?? ctx.target,
            caller: ctx.auth?.subject,
          };
          seen.push(request);
          if (options.refuse?.(request) !== true) return next(ctx);
          return Promise.resolve(
            refusal({ code: 'REFUSED_BY_RECORDER', message: `The recorder refuses this ${request.kind}.` }),
          );
        };
      });
      // #endregion guard
    },
  });
  return { plugin, seen };
}
