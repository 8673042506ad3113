import { Stage, definePlugin, parseOptions, readRefusal } from '@sluice/core';
import type { CallContext, CallToolResult, Plugin } from '@sluice/core';
import { audit } from './audit.js';
import { ChainRules } from './chain-rules.js';
import { hasDirective } from './directive.js';
import { ChainingOptions } from './options.js';
import { isChainStep, runChain } from './server-chain.js';
import { ChainCatalog } from './tool-catalog.js';
import { VERSION } from './version.js';

export const PLUGIN_NAME = 'chaining';

/**
 * Runs the chains that tool results ask for in `_meta` (`dev.sluice/nextTool`,
 * `nextTool`, `openai/nextTool`): each next tool is called through
 * `ctx.call()`, so every guard applies to it, after checks of exposure,
 * arguments, depth and cycles. The caller gets the last result with the
 * chain in `_meta["dev.sluice/chain"]`.
 */
export function chaining(options: ChainingOptions = {}): Plugin {
  const config = parseOptions(PLUGIN_NAME, ChainingOptions, options);
  const rules = new ChainRules(config);
  return definePlugin({
    name: PLUGIN_NAME,
    version: VERSION,
    mode: config.mode,
    apply({ hooks, logger, mode, tools }) {
      const catalog = new ChainCatalog(tools, rules, logger);
      // A sync tap: a result without a directive (nearly every call) passes at once; only a chain is waited for.
      // Tool calls only, by nature: only a tool result names a next tool.
      hooks.response.tap({ name: PLUGIN_NAME, stage: Stage.CHAIN, kinds: ['tools/call'] }, (answer, context) => {
        const result = answer as CallToolResult;
        const ctx = context as CallContext;
        if (!hasDirective(result) || isChainStep(ctx)) return result;
        if (readRefusal(result) !== undefined) return result;
        if (!catalog.follows(ctx.tool)) {
          if (logger.isLevelEnabled('debug')) {
            logger.debug(
              { event: 'chain.not_followed', tool: ctx.tool.name, requestId: ctx.requestId },
              'next-tool directive left to the client',
            );
          }
          return result;
        }
        if (mode === 'audit') return audit(config, catalog, ctx, result);
        return runChain(config, catalog, logger, ctx, result);
      });
    },
  });
}
