import { z } from 'zod';
import type { CallContext, Headers } from '@sluice/core';
import type { Plugin } from '@sluice/core';
import type { SluiceTool } from '@sluice/core';
import { PluginModeSchema, definePlugin, parseOptions } from '@sluice/core';
import { refusal } from '@sluice/core';
import { Stage } from '@sluice/core';
import { CoreErrorCode, invalidParams } from '@sluice/core';
import type { GlobMatcher } from '@sluice/core/internal';
import { compileGlobs } from '@sluice/core/internal';

/** The request headers the filter reads: comma-separated glob patterns. */
export const RequestFilterHeader = Object.freeze({
  /** Only tools whose exposed name matches are listed and callable. */
  INCLUDE_TOOLS: 'x-sluice-include-tools',
  /** Tools whose exposed name matches are hidden and refused. */
  EXCLUDE_TOOLS: 'x-sluice-exclude-tools',
  /** Only tools imported from matching upstreams (by configured name) are listed and callable; local tools are hidden. */
  INCLUDE_SERVERS: 'x-sluice-include-servers',
  /** Tools imported from matching upstreams are hidden and refused; local tools stay. */
  EXCLUDE_SERVERS: 'x-sluice-exclude-servers',
} as const);

export const RequestFilterOptions = z
  .object({
    mode: PluginModeSchema.default('enforce'),
  })
  .strict();

export type RequestFilterOptions = z.input<typeof RequestFilterOptions>;

const NAME = 'request-filter';
const VERSION = '0.1.0';
/** Bounds on what one request can make the filter compile: these headers are attacker-controlled. */
const MAX_PATTERNS = 64;
const MAX_PATTERN_LENGTH = 256;
const MAX_CACHED = 256;

interface Rules {
  readonly includeTools?: GlobMatcher;
  readonly excludeTools?: GlobMatcher;
  readonly includeServers?: GlobMatcher;
  readonly excludeServers?: GlobMatcher;
}

/**
 * Filters tools per request by the `x-sluice-*` headers (over HTTP only: other
 * transports carry no headers): hidden from `tools/list`, and refused with
 * `TOOL_NOT_AVAILABLE` when called anyway; an excluded upstream's resources,
 * templates and prompts are hidden from their lists, and not found when
 * read, subscribed, got or completed.
 */
export function requestFilter(options: RequestFilterOptions = {}): Plugin {
  const config = parseOptions(NAME, RequestFilterOptions, options);
  return definePlugin({
    name: NAME,
    version: VERSION,
    mode: config.mode,
    apply({ hooks, mode }) {
      const matchers = new Map<string, GlobMatcher | undefined>();
      const matcherOf = (headers: Headers, header: string): GlobMatcher | undefined => {
        const value = headers[header];
        if (value === undefined) return undefined;
        if (matchers.has(value)) return matchers.get(value);
        const patterns = value
          .split(',')
          .map((p) => p.trim())
          .filter((p) => p.length > 0);
        // Reading only part of a filter would fail open (an exclusion ignored): refuse the request instead.
        if (patterns.length > MAX_PATTERNS)
          throw invalidParams(`${header} has ${patterns.length} patterns; at most ${MAX_PATTERNS} are accepted`);
        if (patterns.some((p) => p.length > MAX_PATTERN_LENGTH))
          throw invalidParams(`${header} has a pattern longer than ${MAX_PATTERN_LENGTH} characters`);
        if (matchers.size >= MAX_CACHED) matchers.clear();
        const matcher = patterns.length === 0 ? undefined : compileGlobs(patterns);
        matchers.set(value, matcher);
        return matcher;
      };
      const rulesOf = (headers: Headers): Rules | undefined => {
        // Most requests carry none of the headers: they cost four lookups and no allocation.
        if (
          headers[RequestFilterHeader.INCLUDE_TOOLS] === undefined &&
          headers[RequestFilterHeader.EXCLUDE_TOOLS] === undefined &&
          headers[RequestFilterHeader.INCLUDE_SERVERS] === undefined &&
          headers[RequestFilterHeader.EXCLUDE_SERVERS] === undefined
        )
          return undefined;
        const rules: Rules = {
          includeTools: matcherOf(headers, RequestFilterHeader.INCLUDE_TOOLS),
          excludeTools: matcherOf(headers, RequestFilterHeader.EXCLUDE_TOOLS),
          includeServers: matcherOf(headers, RequestFilterHeader.INCLUDE_SERVERS),
          excludeServers: matcherOf(headers, RequestFilterHeader.EXCLUDE_SERVERS),
        };
        return rules.includeTools || rules.excludeTools || rules.includeServers || rules.excludeServers
          ? rules
          : undefined;
      };

      hooks.listTools.tap({ name: NAME, stage: Stage.FILTER }, (tools, ctx) => {
        const rules = rulesOf(ctx.headers);
        if (rules === undefined) return tools;
        const kept = tools.filter(
          (tool) => exclusion(rules, tool.name, upstreamOf(ctx.toolOf(tool.name))) === undefined,
        );
        if (mode !== 'audit') return kept;
        if (kept.length < tools.length) {
          ctx.logger.info(
            { event: 'request_filter.audit', hidden: tools.length - kept.length },
            'audit: request-filter would have hidden tools',
          );
        }
        return tools;
      });

      // Lists of resources, templates and prompts of an upstream follow its server rules (they have no tool name).
      hooks.listFeatures.tap({ name: NAME, stage: Stage.FILTER }, (ctx) => {
        const rules = rulesOf(ctx.headers);
        if (rules === undefined) return undefined;
        const reason = serverExclusion(rules, ctx.upstream);
        if (reason === undefined || mode !== 'audit') return reason;
        ctx.logger.info(
          { event: 'request_filter.audit', method: ctx.method, upstream: ctx.upstream },
          'audit: request-filter would have hidden an upstream',
        );
        return undefined;
      });

      // Every request kind, one tap: an excluded tool is refused, an excluded upstream's resource or prompt is not
      // found. In audit mode the core turns the refusal into a log line.
      hooks.request.tap({ name: NAME, stage: Stage.FILTER }, (ctx) => {
        const rules = rulesOf(ctx.headers);
        if (rules === undefined) return undefined;
        if (ctx.kind !== 'tools/call') {
          const reason = serverExclusion(rules, ctx.upstream);
          return reason === undefined
            ? undefined
            : refusal({ code: CoreErrorCode.NOT_FOUND, message: `Not available to this request: ${reason}.` });
        }
        const tool = (ctx as CallContext).tool;
        const reason = exclusion(rules, tool.name, upstreamOf(tool));
        if (reason === undefined) return undefined;
        return refusal({
          code: CoreErrorCode.TOOL_NOT_AVAILABLE,
          message: `Tool "${tool.name}" is not available to this request: ${reason}.`,
          suggestion: 'Call one of the tools that tools/list shows for this request.',
        });
      });
    },
  });
}

function upstreamOf(tool: SluiceTool | undefined): string | undefined {
  return tool?.source.kind === 'upstream' ? tool.source.upstream : undefined;
}

/** Why the request's rules leave a tool out, or undefined when they keep it. */
function exclusion(rules: Rules, tool: string, upstream: string | undefined): string | undefined {
  if (rules.includeTools && !rules.includeTools(tool)) return `it does not match ${RequestFilterHeader.INCLUDE_TOOLS}`;
  if (rules.excludeTools?.(tool)) return `it matches ${RequestFilterHeader.EXCLUDE_TOOLS}`;
  return serverExclusion(rules, upstream);
}

/** Why the request's server rules leave out what comes from `upstream` (undefined: local), or undefined. */
function serverExclusion(rules: Rules, upstream: string | undefined): string | undefined {
  if (rules.includeServers && (upstream === undefined || !rules.includeServers(upstream))) {
    return `its server does not match ${RequestFilterHeader.INCLUDE_SERVERS}`;
  }
  if (rules.excludeServers && upstream !== undefined && rules.excludeServers(upstream))
    return `its server matches ${RequestFilterHeader.EXCLUDE_SERVERS}`;
  return undefined;
}
