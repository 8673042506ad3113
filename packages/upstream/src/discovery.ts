import type { Executor } from '@sluice/core';
import type { Tool } from '@sluice/core';
import type { ToolDraft } from '@sluice/core';
import type { ConnectionSummary, SkippedTool, SluiceTool, ToolSource } from '@sluice/core';
import { isToolName } from '@sluice/core';
import type { GlobMatcher } from '@sluice/core/internal';
import { compileGlobs } from '@sluice/core/internal';
import { canonicalUri } from '@sluice/core';
import type { ResolvedImportOptions } from './options.js';

/** Which of an upstream's tools to import, and under what names. */
export interface ToolSelection {
  readonly upstream: string;
  readonly trusted: boolean;
  readonly connection: ConnectionSummary;
  /** Maps an upstream tool name to the name Sluice exposes. */
  exposedName(originalName: string): string;
  /** Why a tool is left out by `allowTools` / `denyTools`, or undefined to import it. */
  exclusion(originalName: string): string | undefined;
  /**
   * Why a prompt (by its upstream name) is left out by `allowPrompts` /
   * `denyPrompts`, or a resource or template (by URI or URI template) by
   * `allowResources` / `denyResources`; undefined to import it.
   */
  featureExclusion(kind: 'prompt' | 'resource' | 'template', id: string): string | undefined;
  /**
   * Why a request for a resource URI (canonical, see `canonicalUri`) is refused by the `denyResources`
   * patterns, or undefined: asked on every read, subscription and completion, templates' URIs included.
   */
  resourceDenial(uri: string): string | undefined;
}

export function createSelection(options: ResolvedImportOptions): ToolSelection {
  const allow: GlobMatcher | undefined = options.allowTools ? compileGlobs(options.allowTools) : undefined;
  const deny: GlobMatcher | undefined = options.denyTools ? compileGlobs(options.denyTools) : undefined;
  const prefix = options.namespace === undefined ? '' : `${options.namespace}${options.separator}`;
  const prompts = globPair(options.allowPrompts, options.denyPrompts, 'Prompts', options.name);
  const allowResources = options.allowResources?.map(canonicalPattern);
  const denyResources = options.denyResources?.map(canonicalPattern);
  const resources = globPair(allowResources, denyResources, 'Resources', options.name);
  const deniedResource = denyResources ? compileGlobs(denyResources) : undefined;
  return {
    upstream: options.name,
    trusted: options.trusted,
    connection: summarize(options.connection),
    exposedName: (originalName) => `${prefix}${originalName}`,
    exclusion: (originalName) => {
      if (deny?.(originalName)) return `Denied by the denyTools patterns of upstream "${options.name}"`;
      if (allow && !allow(originalName)) return `Not matched by the allowTools patterns of upstream "${options.name}"`;
      return undefined;
    },
    featureExclusion: (kind, id) => (kind === 'prompt' ? prompts(id) : resources(id)),
    resourceDenial: (uri) =>
      deniedResource?.(uri) ? `Denied by the denyResources patterns of upstream "${options.name}"` : undefined,
  };
}

/** A resource glob in the canonical spelling its URIs are matched in; a pattern that is no URI stays as written. */
function canonicalPattern(pattern: string): string {
  try {
    return canonicalUri(pattern);
  } catch {
    return pattern;
  }
}

/** The exclusion rule of one `allow<Kind>` / `deny<Kind>` pair. */
function globPair(
  allowed: readonly string[] | undefined,
  denied: readonly string[] | undefined,
  kind: string,
  upstream: string,
): (id: string) => string | undefined {
  const allow = allowed ? compileGlobs(allowed) : undefined;
  const deny = denied ? compileGlobs(denied) : undefined;
  return (id) => {
    if (deny?.(id)) return `Denied by the deny${kind} patterns of upstream "${upstream}"`;
    if (allow && !allow(id)) return `Not matched by the allow${kind} patterns of upstream "${upstream}"`;
    return undefined;
  };
}

/** A connection as plugins may see it: no header values, no environment, no credentials in URLs. */
export function summarize(connection: ResolvedImportOptions['connection']): ConnectionSummary {
  switch (connection.type) {
    case 'stdio':
      return Object.freeze({
        type: 'stdio',
        command: connection.command,
        args: Object.freeze([...(connection.args ?? [])]),
      });
    case 'http':
    case 'sse': {
      const url = new URL(connection.url);
      return Object.freeze({
        type: connection.type,
        url: `${url.origin}${url.pathname}`,
        headerNames: Object.freeze(Object.keys(connection.headers ?? {}).map((name) => name.toLowerCase())),
      });
    }
    default:
      return Object.freeze({ type: 'in-process' });
  }
}

/** The tools to put through the `import` hook, and those left out before it with reasons. */
export interface ImportPlan {
  readonly drafts: ToolDraft[];
  readonly skipped: SkippedTool[];
}

/**
 * Turns an upstream's `tools/list` into drafts: filtered by the upstream's
 * globs, renamed into its namespace, each run by `executorFor` (the proxy).
 */
export function planImport(
  listed: readonly Tool[],
  selection: ToolSelection,
  executorFor: (original: Tool) => Executor,
): ImportPlan {
  const drafts: ToolDraft[] = [];
  const skipped: SkippedTool[] = [];
  const seen = new Set<string>();
  for (const original of listed) {
    const originalName = original.name;
    const exposed = selection.exposedName(originalName);
    const reason = !isToolName(exposed)
      ? `Upstream "${selection.upstream}" lists a tool whose name ${JSON.stringify(exposed.slice(0, 140))} is not a valid tool name`
      : seen.has(exposed)
        ? `Upstream "${selection.upstream}" lists "${originalName}" twice`
        : selection.exclusion(originalName);
    if (reason !== undefined) {
      skipped.push({ name: exposed, reason, by: 'core' });
      continue;
    }
    seen.add(exposed);
    const source: ToolSource = {
      kind: 'upstream',
      upstream: selection.upstream,
      originalName,
      trusted: selection.trusted,
      connection: selection.connection,
    };
    const tool: SluiceTool = { name: exposed, definition: { ...original, name: exposed }, policy: {}, source };
    drafts.push({ tool, base: executorFor(original) });
  }
  return { drafts, skipped };
}
