import { Stage, definePlugin, parseOptions } from '@sluice/core';
import type { CallContext, Plugin } from '@sluice/core';
import { createCallGuard } from './call-guard.js';
import { createImportFilter } from './import-filter.js';
import { LoopGuardOptions } from './options.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'loop-guard';

/**
 * Refuses tool-call loops across services: at import time, upstream tools
 * that would lead back here are not imported; at run time, every call is
 * checked against the call stack carried in `_meta`, and passes it on.
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
      const guard = createCallGuard({ maxDepth: config.maxDepth, originService: config.originService, audit });
      // Tool calls only, by nature: only a tool call carries a call stack and an origin service.
      hooks.request.tap({ name: PLUGIN_NAME, stage: Stage.LOOP, kinds: ['tools/call'] }, (ctx) =>
        guard(ctx as CallContext),
      );
    },
  });
}
