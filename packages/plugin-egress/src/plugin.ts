import { Stage, definePlugin, parseOptions } from '@sluice/core';
import type { Plugin, PluginApi, PluginMode, SluiceTool } from '@sluice/core';
import { NO_LIMIT, ToolLimits } from './limits.js';
import { fitsWithin } from './measure.js';
import type { ParsedEgressOptions } from './options.js';
import { EgressOptions } from './options.js';
import { overLimit } from './over-limit.js';
import './policy.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'egress';

/**
 * For an imported tool, the proxy stops reading an upstream response past
 * this multiple of the tool's limit. Results between the limit and the cap
 * are read and cut cleanly; the headroom covers JSON escaping and framing
 * on the wire, which the limit does not count. Past the cap the call fails
 * instead of buffering the body whole.
 */
export const UPSTREAM_READ_FACTOR = 4;

/**
 * The egress guard: caps the bytes a tool result carries to the model,
 * cutting it at a character boundary and telling the model to paginate.
 */
export function egress(options: EgressOptions = {}): Plugin {
  const config = parseOptions(PLUGIN_NAME, EgressOptions, options);
  return definePlugin({
    name: PLUGIN_NAME,
    version: VERSION,
    mode: config.mode,
    apply: (api) => applyEgress(api, config),
  });
}

function applyEgress({ hooks, mode }: PluginApi, config: ParsedEgressOptions): void {
  const limits = new ToolLimits(config, PLUGIN_NAME);
  const audit = mode === 'audit';
  // LAST: patterns must see the name the tool ends up with.
  hooks.import.tap({ name: PLUGIN_NAME, stage: Stage.LAST }, (batch) => {
    for (const tool of batch.tools) capUpstreamRead(tool, limits.resolve(tool), mode);
    return batch;
  });
  hooks.postCall.tap({ name: PLUGIN_NAME, stage: Stage.TRANSFORM }, (result, ctx) => {
    const limit = limits.of(ctx.tool);
    if (limit === NO_LIMIT || fitsWithin(result, limit)) return result;
    return overLimit(result, ctx, limit, audit);
  });
}

/** Tells the upstream proxy where to stop reading; in audit mode nothing is enforced, so nothing is set. */
function capUpstreamRead(tool: SluiceTool, limit: number, mode: PluginMode): void {
  if (limit === NO_LIMIT || mode !== 'enforce' || tool.source.kind !== 'upstream') return;
  const cap = Math.min(limit * UPSTREAM_READ_FACTOR, Number.MAX_SAFE_INTEGER);
  tool.responseLimitBytes = Math.min(tool.responseLimitBytes ?? cap, cap);
}
