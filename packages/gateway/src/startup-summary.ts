import type { UpstreamStatus } from '@sluice/core';
import type { UpstreamImport } from './gateway.js';
import { textTable } from './text-table.js';

export interface StartupFacts {
  readonly url: string | undefined;
  readonly stdio: boolean;
  /** Tools exposed in all. */
  readonly tools: number;
  readonly imports: readonly UpstreamImport[];
  readonly upstreams: readonly UpstreamStatus[];
  readonly plugins: readonly string[];
}

/** The one `gateway.ready` line: structured fields for JSON logs, and a table for people. */
export interface StartupSummary {
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

/**
 * What the gateway serves once it started: where, each upstream with its
 * health and tools exposed and skipped, the plugins. One line at `info`
 * in place of a line per upstream and per tool.
 */
export function startupSummary(facts: StartupFacts): StartupSummary {
  const health = new Map(facts.upstreams.map((u) => [u.name, u]));
  const upstreams = facts.imports.map((i) => ({
    name: i.upstream,
    transport: health.get(i.upstream)?.transport ?? '-',
    health: health.get(i.upstream)?.health ?? 'connecting',
    exposed: i.imported.length,
    skipped: i.skipped.length,
  }));
  const skipped = upstreams.reduce((sum, u) => sum + u.skipped, 0);
  const where = `${facts.url ? ` at ${facts.url}` : ''}${facts.stdio ? ' on stdio' : ''}`;
  const rows = [
    ['upstream', 'transport', 'health', 'exposed', 'skipped'],
    ...upstreams.map((u) => [u.name, u.transport, u.health, String(u.exposed), String(u.skipped)]),
  ];
  const lines = [
    `gateway ready${where}: ${facts.tools} tools exposed, ${skipped} skipped, from ${upstreams.length} upstreams`,
    ...(upstreams.length > 0 ? textTable(rows) : []),
    `  plugins: ${facts.plugins.length > 0 ? facts.plugins.join(', ') : '(none)'}`,
  ];
  return {
    fields: {
      event: 'gateway.ready',
      url: facts.url,
      stdio: facts.stdio,
      tools: facts.tools,
      skipped,
      upstreams,
      plugins: facts.plugins,
    },
    message: lines.join('\n'),
  };
}
