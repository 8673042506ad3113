import { GUARDED_KINDS, Stage, definePlugin, parseOptions } from '@sluice/core';
import type { CallContext, Plugin } from '@sluice/core';
import { createCallGuard } from './call-guard.js';
import { createFeatureGuard } from './feature-guard.js';
import type { FeatureKind } from './feature-guard.js';
import { createImportFilter } from './import-filter.js';
import { LoopGuardOptions } from './options.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'loop-guard';

/** Every request kind but tool calls: resource reads and subscriptions, prompt gets, completions. */
const FEATURE_KINDS = GUARDED_KINDS.filter((kind): kind is FeatureKind => kind !== 'tools/call');

/**
 * Refuses tool-call and request loops across services: at import time,
 * upstream tools that would lead back here are not imported; at run time,
 * every tool call and every other guarded request is checked against the
 * call stack carried in `_meta`, and passes it on.
 */
export function loopGuard(options: LoopGuardOptions = {}): Plugin {
  const config = parseOptions(PLUGIN_NAME, LoopGuardOptions, options);
  return definePlugin({
    name: PLUGIN_NAME,
    version: VERSION,
    mode: config.mode,
    apply({ hooks, logger, mode }) {
      const audit = mode === 'audit';
      const filter = createImportFilter(config, { plugin: PLUGIN_NAME, logger, audit });
      if (filter) hooks.import.tap({ name: PLUGIN_NAME, stage: Stage.LOOP }, filter);
      const settings = { maxDepth: config.maxDepth, originService: config.originService, audit };
      const guard = createCallGuard(settings);
      // Two taps, so that a tool call runs the one it always ran and nothing more.
      hooks.request.tap({ name: PLUGIN_NAME, stage: Stage.LOOP, kinds: ['tools/call'] }, (ctx) =>
        guard(ctx as CallContext),
      );
      hooks.request.tap({ name: PLUGIN_NAME, stage: Stage.LOOP, kinds: FEATURE_KINDS }, createFeatureGuard(settings));
    },
  });
}
