import { SluiceError, isGlob, matchGlob } from '@sluice/core';
import type { SluiceTool } from '@sluice/core';
import { EgressErrorCode } from './errors.js';
import type { ParsedEgressOptions } from './options.js';
import { EgressPolicy } from './options.js';

/** No limit applies to the tool. */
export const NO_LIMIT = 0;

/**
 * Which limit applies to which tool, resolved once per tool and cached:
 * the tool's own `policy.egress` first, then an exact name in `tools`, then
 * the first pattern in `tools` that matches (in the order written), then the
 * server-wide `maxPayloadBytes`.
 */
export class ToolLimits {
  private readonly cache = new WeakMap<SluiceTool, number>();
  private readonly exact = new Map<string, number>();
  private readonly patterns: { readonly pattern: string; readonly bytes: number }[] = [];
  private readonly fallback: number;

  constructor(
    options: ParsedEgressOptions,
    private readonly plugin: string,
  ) {
    for (const [pattern, policy] of Object.entries(options.tools ?? {})) {
      if (isGlob(pattern)) this.patterns.push({ pattern, bytes: policy.maxPayloadBytes });
      else this.exact.set(pattern, policy.maxPayloadBytes);
    }
    this.fallback = options.maxPayloadBytes ?? NO_LIMIT;
  }

  /** The limit of a tool whose name is final (frozen after import), from the cache after the first call. */
  of(tool: SluiceTool): number {
    let bytes = this.cache.get(tool);
    if (bytes === undefined) {
      bytes = this.resolve(tool);
      this.cache.set(tool, bytes);
    }
    return bytes;
  }

  /** The limit for a tool by its current name and policy; throws if its policy is malformed. */
  resolve(tool: SluiceTool): number {
    const own = this.policyOf(tool);
    if (own !== undefined) return own;
    const exact = this.exact.get(tool.name);
    if (exact !== undefined) return exact;
    for (const { pattern, bytes } of this.patterns) if (matchGlob(pattern, tool.name)) return bytes;
    return this.fallback;
  }

  private policyOf(tool: SluiceTool): number | undefined {
    const raw: unknown = tool.policy?.egress;
    if (raw === undefined) return undefined;
    const parsed = EgressPolicy.safeParse(raw);
    if (parsed.success) return parsed.data.maxPayloadBytes;
    const detail = parsed.error.issues.map((i) => `${['egress', ...i.path].join('.')}: ${i.message}`).join('; ');
    throw new SluiceError(
      EgressErrorCode.INVALID_POLICY,
      `Tool "${tool.name}" has an invalid egress policy: ${detail}`,
      {
        plugin: this.plugin,
        hook: 'import',
      },
    );
  }
}
