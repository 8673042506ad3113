import { CoreErrorCode, Stage, definePlugin, parseOptions, readRefusal } from '@sluice/core';
import type {
  CallContext,
  CallToolResult,
  FeatureResult,
  GuardedKind,
  Plugin,
  PluginApi,
  PluginMode,
  SluiceTool,
} from '@sluice/core';
import { capFeature } from './features.js';
import { featureEgress } from './feature-guard.js';
import { NO_LIMIT, ToolLimits } from './limits.js';
import { fitsWithin } from './measure.js';
import type { ParsedEgressOptions } from './options.js';
import { EgressOptions } from './options.js';
import { overLimit } from './over-limit.js';
import { unreadAnswer } from './intervention.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'egress';

export { UPSTREAM_READ_FACTOR } from './read-factor.js';
import { UPSTREAM_READ_FACTOR } from './read-factor.js';

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
  // Resources read and prompts got through the gateway: the server-wide limit, when there is one.
  const featureLimit = config.maxPayloadBytes;
  if (featureLimit !== undefined)
    // Completions capped, and every feature answer read no further than the cut, as tool results are.
    hooks.guard.tap({ name: PLUGIN_NAME, stage: Stage.TRANSFORM }, (next, target) =>
      featureEgress(next, target, featureLimit, audit),
    );
  // One response tap: tool results by each tool's limit, reads and prompt gets by the server-wide one.
  const kinds: GuardedKind[] =
    featureLimit === undefined ? ['tools/call'] : ['tools/call', 'resources/read', 'prompts/get'];
  hooks.response.tap({ name: PLUGIN_NAME, stage: Stage.TRANSFORM, kinds }, (answer, ctx) => {
    if (ctx.kind !== 'tools/call') {
      if (featureLimit === undefined || (ctx.kind !== 'resources/read' && ctx.kind !== 'prompts/get')) return answer;
      // The answer of a read or a prompt get, as the protocol shapes it.
      return capFeature({ method: ctx.kind, result: answer } as FeatureResult, ctx, featureLimit, audit).result;
    }
    const call = ctx as CallContext;
    const result = answer as CallToolResult;
    const limit = limits.of(call.tool);
    if (limit === NO_LIMIT) return result;
    if (result.isError === true && readRefusal(result)?.code === CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE)
      return unreadAnswer(result, call.tool.name, limit);
    if (fitsWithin(result, limit)) return result;
    return overLimit(result, call, limit, audit);
  });
}

/** Tells the upstream proxy where to stop reading; in audit mode nothing is enforced, so nothing is set. */
function capUpstreamRead(tool: SluiceTool, limit: number, mode: PluginMode): void {
  if (limit === NO_LIMIT || mode !== 'enforce' || tool.source.kind !== 'upstream') return;
  const cap = Math.min(limit * UPSTREAM_READ_FACTOR, Number.MAX_SAFE_INTEGER);
  tool.responseLimitBytes = Math.min(tool.responseLimitBytes ?? cap, cap);
}
