import { Stage, definePlugin, parseOptions, refusal } from '@sluice/core';
import type { CallContext, CallToolResult, Plugin, PluginApi } from '@sluice/core';
import { AuthzErrorCode } from './errors.js';
import type { ParsedAuthzOptions } from './options.js';
import { AuthzOptions } from './options.js';
import { AuthzPolicy } from './policy.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'authz';

/**
 * Per-caller tool policy: a caller sees in `tools/list` only the tools its
 * verified identity grants, and a call to any other tool, direct, chained
 * or made through `ctx.call()`, is refused with `FORBIDDEN`.
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
  hooks.preCall.tap({ name: PLUGIN_NAME, stage: Stage.FILTER }, (ctx) =>
    policy.allows(ctx.auth, ctx.tool) ? undefined : forbidden(ctx),
  );
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
