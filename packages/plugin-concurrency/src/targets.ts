import { canonicalUri, matchGlob, selectTools } from '@sluice/core';
import type { RequestContext, RequestTarget } from '@sluice/core';
import type { ConcurrencyConfig, Limit } from './options.js';

/** One per-target setting: what it matches, and its limit (`false`: the kind's setting applies). */
export interface TargetLimit {
  /** The glob or selector as written: it names the setting's slots. */
  readonly key: string;
  readonly matches: (target: string) => boolean;
  readonly limit: Limit | false;
}

/** The per-target settings, compiled once: resource URI globs and prompt selectors, in the order written. */
export interface TargetLimits {
  readonly resources: readonly TargetLimit[];
  readonly prompts: readonly TargetLimit[];
}

/** A glob in the canonical spelling URIs are compared in; a pattern that is no URI stays as written. */
function canonicalGlob(pattern: string): string {
  try {
    return canonicalUri(pattern);
  } catch {
    return pattern;
  }
}

export function compileTargets(config: Pick<ConcurrencyConfig, 'resources' | 'prompts'>): TargetLimits {
  return {
    resources: Object.entries(config.resources).map(([key, limit]) => {
      const glob = canonicalGlob(key);
      return { key, limit, matches: (uri: string) => matchGlob(glob, uri) };
    }),
    prompts: Object.entries(config.prompts).map(([key, limit]) => {
      const selected = selectTools([key]);
      return { key, limit, matches: (name: string) => selected(name) };
    }),
  };
}

/** The per-target settings that apply to one planned kind of request. */
export function targetLimitsOf(targets: TargetLimits, target: RequestTarget): readonly TargetLimit[] {
  if (target.kind === 'resources/read' || target.kind === 'resources/subscribe') return targets.resources;
  if (target.kind === 'prompts/get') return targets.prompts;
  return [];
}

type Run = (ctx: RequestContext) => Promise<unknown>;

/**
 * Routes each request to the executor of the first per-target setting that
 * matches its target (the request's canonical URI or prompt name), or to the
 * kind's executor when none does.
 */
export function routeByTarget(routes: readonly { matches: (target: string) => boolean; run: Run }[], kind: Run): Run {
  return (ctx) => {
    const named = ctx.target;
    if (named !== undefined) for (const route of routes) if (route.matches(named)) return route.run(ctx);
    return kind(ctx);
  };
}
