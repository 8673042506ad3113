import { CoreErrorCode, Stage, definePlugin, parseOptions, refusal } from '@sluice/core';
import type { CallContext, CallToolResult, Plugin, PluginApi, RequestContext } from '@sluice/core';
import { AuthzErrorCode } from './errors.js';
import type { ParsedAuthzOptions } from './options.js';
import { AuthzOptions } from './options.js';
import { AuthzPolicy } from './policy.js';
import { ServedItems } from './served.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'authz';

/**
 * Per-caller policy over every request kind: a caller sees in `tools/list`,
 * `resources/list`, `resources/templates/list` and `prompts/list` only what
 * its verified identity grants; a call to any other tool (direct, chained or
 * made through `ctx.call()`), and a read, subscription, prompt get or
 * completion of anything else, is answered as for an item that does not
 * exist (or, with `hidden: 'forbidden'`, refused with `FORBIDDEN`). A
 * `logging/setLevel` reaches only the upstreams the caller is granted
 * anything of; granted none, it is refused with `FORBIDDEN`.
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

function applyAuthz({ hooks, mode, tools }: PluginApi, config: ParsedAuthzOptions): void {
  const policy = new AuthzPolicy(config);
  const served = new ServedItems(tools);
  // In audit mode every caller keeps seeing every tool; refusals become log lines (core turns them so).
  if (mode === 'enforce')
    hooks.listTools.tap({ name: PLUGIN_NAME, stage: Stage.FILTER }, (listed, ctx) =>
      listed.filter((tool) => policy.allows(ctx.auth, ctx.toolOf(tool.name) ?? tool.name)),
    );
  // Lists of resources, templates and prompts, item by item; a request for one item meets the request tap below.
  if (mode === 'enforce')
    hooks.listFeatures.tap({ name: PLUGIN_NAME, stage: Stage.FILTER }, (ctx) => {
      const request = { kind: ctx.method, upstream: ctx.upstream, target: ctx.target };
      return policy.allowsFeature(ctx.auth, request) ? undefined : 'not granted to this caller';
    });
  // What each upstream serves, for setLevel: seen after every other tap has had its say.
  hooks.importFeatures.tap({ name: PLUGIN_NAME, stage: Stage.LAST }, served.admitted);
  // One policy for every request kind: tool calls (direct, chained, ctx.call()), reads, subscriptions (and
  // 2026-07-28 listen filters), prompt gets, completions, setLevel. Asked before a tool call's arguments are
  // checked, so that a hidden tool's schema tells nothing. In audit mode the core turns a refusal into a log line.
  const hide = config.hidden === 'not_found';
  hooks.request.tap({ name: PLUGIN_NAME, stage: Stage.FILTER, beforeArguments: true }, (ctx) => {
    if (ctx.kind === 'tools/call') {
      const call = ctx as CallContext;
      return policy.allows(call.auth, call.tool) ? undefined : forbidden(call, hide);
    }
    if (ctx.kind === 'logging/setLevel') {
      const items = ctx.upstream === undefined ? undefined : served.of(ctx.upstream);
      return policy.allowsLogLevel(ctx.auth, items) ? undefined : forbiddenLevel(ctx);
    }
    const request = { kind: ctx.kind, upstream: ctx.upstream, target: ctx.target, completing: ctx.completing };
    return policy.allowsFeature(ctx.auth, request) ? undefined : forbiddenRequest(ctx, hide);
  });
}

const whoOf = (ctx: RequestContext): string => (ctx.auth ? `"${ctx.auth.subject}"` : 'an unauthenticated caller');

/**
 * The answer for a tool the caller may not use: hidden (core answers it as a
 * tool that does not exist), or `FORBIDDEN`.
 */
function forbidden(ctx: CallContext, hide: boolean): CallToolResult {
  ctx.logger.info({ event: 'authz.forbidden', caller: ctx.auth?.subject, scopes: ctx.auth?.scopes }, 'tool refused');
  if (hide) return notFound(`The tool "${ctx.tool.name}" is not granted to ${whoOf(ctx)}.`);
  return refusal({
    code: AuthzErrorCode.FORBIDDEN,
    message: `The tool "${ctx.tool.name}" is not available to ${whoOf(ctx)}.`,
    suggestion: 'Use a tool from tools/list, or ask an operator for a grant that includes this tool.',
  });
}

/** The answer for a resource, template or prompt the caller may not use: hidden (not found), or `FORBIDDEN`. */
function forbiddenRequest(ctx: RequestContext, hide: boolean): CallToolResult {
  const item = ctx.target === undefined ? ctx.kind : `${ctx.kind} of "${ctx.target}"`;
  ctx.logger.info(
    { event: 'authz.forbidden', kind: ctx.kind, target: ctx.target, caller: ctx.auth?.subject },
    'request refused',
  );
  if (hide) return notFound(`The ${item} is not granted to ${whoOf(ctx)}.`);
  return refusal({
    code: AuthzErrorCode.FORBIDDEN,
    message: `The ${item} is not available to ${whoOf(ctx)}.`,
    suggestion: 'Use what resources/list and prompts/list show, or ask an operator for a grant that includes it.',
  });
}

/**
 * A setLevel on an upstream the caller is granted nothing of. Refused, not
 * hidden (it names no item), and without naming the upstream: the client
 * gets it only when no upstream admitted the level.
 */
function forbiddenLevel(ctx: RequestContext): CallToolResult {
  ctx.logger.info(
    { event: 'authz.forbidden', kind: ctx.kind, upstream: ctx.upstream, target: ctx.target, caller: ctx.auth?.subject },
    'log level refused',
  );
  return refusal({
    code: AuthzErrorCode.FORBIDDEN,
    message: `Setting the log level is not available to ${whoOf(ctx)}: its grants include nothing of the servers that log.`,
    suggestion: 'Ask an operator for a grant on the tools, resources or prompts whose logs you need.',
  });
}

/** A refusal that core answers as an item that does not exist; its message reaches only the logs and observers. */
function notFound(message: string): CallToolResult {
  return refusal({ code: CoreErrorCode.NOT_FOUND, message });
}
