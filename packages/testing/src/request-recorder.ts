import { Stage, definePlugin, isToolCall, refusal } from '@sluice/core';
import type { GuardedKind, Plugin } from '@sluice/core';

/** One request a `requestRecorder()` saw. */
export interface SeenRequest {
  readonly kind: GuardedKind;
  /** The upstream that serves it; undefined for the server's own tools and handlers. */
  readonly upstream: string | undefined;
  /** The tool's name on a tool call, else the item the request names (a canonical URI, a prompt name; a setLevel's level). */
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
 * resource reads and subscriptions (2026-07-28 listen filters too), prompt
 * gets, completions and log levels (`logging/setLevel`, once per upstream).
 * It taps the `request` hook alone, for every kind, records each request,
 * and refuses those its `refuse` option names; tests use it to show that a
 * policy meets every kind.
 */
export function requestRecorder(options: RequestRecorderOptions = {}): { plugin: Plugin; seen: SeenRequest[] } {
  const name = options.name ?? 'request-recorder';
  const seen: SeenRequest[] = [];
  const plugin = definePlugin({
    name,
    version: '1.0.0',
    apply({ hooks }) {
      // #region request
      hooks.request.tap({ name, stage: Stage.FILTER }, (ctx) => {
        // A tool call's context is its CallContext: the tool names the target and its source the upstream.
        const tool = isToolCall(ctx) ? ctx.tool : undefined;
        const request: SeenRequest = {
          kind: ctx.kind,
          upstream:
            tool === undefined ? ctx.upstream : tool.source.kind === 'upstream' ? tool.source.upstream : undefined,
          target: tool?.name ?? ctx.target,
          caller: ctx.auth?.subject,
        };
        seen.push(request);
        if (options.refuse?.(request) !== true) return undefined;
        return refusal({ code: 'REFUSED_BY_RECORDER', message: `The recorder refuses this ${request.kind}.` });
      });
      // #endregion request
    },
  });
  return { plugin, seen };
}
