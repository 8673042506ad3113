import { Stage, definePlugin, parseOptions, refusal } from '@sluice/core';
import type { CallContext, CallToolResult, Plugin, PluginApi, RequestContext } from '@sluice/core';
import { AuthzErrorCode } from './errors.js';
import type { ParsedAuthzOptions } from './options.js';
import { AuthzOptions } from './options.js';
import { AuthzPolicy } from './policy.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'authz';

/**
 * Per-caller policy over every request kind: a caller sees in `tools/list`,
 * `resources/list`, `resources/templates/list` and `prompts/list` only what
 * its verified identity grants; a call to any other tool (direct, chained or
 * made through `ctx.call()`), and a read, subscription, prompt get or
 * completion of anything else, is refused with `FORBIDDEN`.
 */
export function authz(options: AuthzOptions = {}): Plugin {
  const config = parseOptions(PLUGIN_NAME, AuthzOptions, options);
  return definePlugin({
    name: PLUGIN_NAME,
    version: VERSION,
    mode: config.mode,
    apply: (api) => applyAuthz(api, config),
  });
}

function applyAuthz({ hooks, mode }: PluginApi, config: ParsedAuthzOptions): void {
  const policy = new AuthzPolicy(config);
  // In audit mode every caller keeps seeing every tool; refusals become log lines (core turns them so).
  if (mode === 'enforce')
    hooks.listTools.tap({ name: PLUGIN_NAME, stage: Stage.FILTER }, (tools, ctx) =>
      tools.filter((tool) => policy.allows(ctx.auth, ctx.toolOf(tool.name) ?? tool.name)),
    );
  // Lists of resources, templates and prompts, item by item; a request for one item meets the request tap below.
  if (mode === 'enforce')
    hooks.listFeatures.tap({ name: PLUGIN_NAME, stage: Stage.FILTER }, (ctx) => {
      const request = { kind: ctx.method, upstream: ctx.upstream, target: ctx.target };
      return policy.allowsFeature(ctx.auth, request) ? undefined : 'not granted to this caller';
    });
  // One policy for every request kind: tool calls (direct, chained, ctx.call()), reads, subscriptions (and
  // 2026-07-28 listen filters), prompt gets, completions. In audit mode the core turns a refusal into a log line.
  hooks.request.tap({ name: PLUGIN_NAME, stage: Stage.FILTER }, (ctx) => {
    if (ctx.kind === 'tools/call') {
      const call = ctx as CallContext;
      return policy.allows(call.auth, call.tool) ? undefined : forbidden(call);
    }
    const request = { kind: ctx.kind, upstream: ctx.upstream, target: ctx.target, completing: ctx.completing };
    return policy.allowsFeature(ctx.auth, request) ? undefined : forbiddenRequest(ctx);
  });
}

function forbiddenRequest(ctx: RequestContext): CallToolResult {
  const who = ctx.auth ? `"${ctx.auth.subject}"` : 'an unauthenticated caller';
  const item = ctx.target === undefined ? ctx.kind : `${ctx.kind} of "${ctx.target}"`;
  ctx.logger.info(
    { event: 'authz.forbidden', kind: ctx.kind, target: ctx.target, caller: ctx.auth?.subject },
    'request refused',
  );
  return refusal({
    code: AuthzErrorCode.FORBIDDEN,
    message: `The ${item} is not available to ${who}.`,
    suggestion: 'Use what resources/list and prompts/list show, or ask an operator for a grant that includes it.',
  });
}

function forbidden(ctx: CallContext): CallToolResult {
  const who = ctx.auth ? `"${ctx.auth.subject}"` : 'an unauthenticated caller';
  ctx.logger.info({ event: 'authz.forbidden', caller: ctx.auth?.subject, scopes: ctx.auth?.scopes }, 'tool refused');
  return refusal({
    code: AuthzErrorCode.FORBIDDEN,
    message: `The tool "${ctx.tool.name}" is not available to ${who}.`,
    suggestion: 'Use a tool from tools/list, or ask an operator for a grant that includes this tool.',
  });
}
