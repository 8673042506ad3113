import { selectTools } from '@sluice/core';
import type { ImportBatch, Logger, SluiceTool } from '@sluice/core';
import type { LoopGuardConfig } from './options.js';

export type ImportFilter = (batch: ImportBatch) => ImportBatch;

interface FilterSettings {
  readonly plugin: string;
  readonly logger: Logger;
  /** Log what would be skipped, and keep it. */
  readonly audit: boolean;
}

/**
 * The `import` tap: keeps out upstream tools that would let a call come back
 * to this service (a denied prefix, usually this service's own) or that the
 * allow-list does not name. Local tools are never touched. Undefined when
 * there is nothing to filter, so the plugin does not tap `import` at all.
 */
export function createImportFilter(config: LoopGuardConfig, settings: FilterSettings): ImportFilter | undefined {
  const prefixes = config.denyToolPrefix === undefined ? [] : [config.denyToolPrefix].flat();
  // Unqualified selectors read the tool's name at the upstream, as qualified ones do.
  const allow = config.allowTools === undefined ? undefined : selectTools(config.allowTools);
  if (prefixes.length === 0 && allow === undefined) return undefined;
  const reasonFor = (tool: SluiceTool): string | undefined => {
    if (tool.source.kind !== 'upstream') return undefined;
    const { originalName } = tool.source;
    const prefix = prefixes.find((p) => originalName.startsWith(p));
    if (prefix !== undefined) return `Denied by denyToolPrefix (${prefix})`;
    if (allow !== undefined && !allow({ name: originalName, source: tool.source })) return 'Not in allowTools';
    return undefined;
  };
  return (batch) => {
    for (const tool of [...batch.tools]) {
      const reason = reasonFor(tool);
      if (reason === undefined) continue;
      const upstream = tool.source.kind === 'upstream' ? tool.source.upstream : undefined;
      if (settings.audit) {
        settings.logger.warn(
          { event: 'loop_guard.would_skip', tool: tool.name, upstream, reason },
          `audit: would not import ${tool.name}`,
        );
        continue;
      }
      batch.skip(tool, reason, settings.plugin);
      settings.logger.info(
        { event: 'loop_guard.skipped', tool: tool.name, upstream, reason },
        `did not import ${tool.name}: ${reason}`,
      );
    }
    return batch;
  };
}
