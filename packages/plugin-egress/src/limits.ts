import { SluiceError, ToolSettings, formatIssues } from '@sluice/core';
import type { SluiceTool } from '@sluice/core';
import { EgressErrorCode } from './errors.js';
import type { ParsedEgressOptions } from './options.js';
import { EgressPolicy } from './options.js';

/** No limit applies to the tool. */
export const NO_LIMIT = 0;

/**
 * Which limit applies to which tool, resolved once per tool and cached, with
 * core's settings table: the tool's own `policy.egress` first, then an exact
 * name in `tools`, then the first selector in `tools` that selects it (in the
 * order written), then the server-wide `maxPayloadBytes`.
 */
export class ToolLimits {
  private readonly cache = new WeakMap<SluiceTool, number>();
  private readonly byTool: ToolSettings<number>;
  private readonly fallback: number;

  constructor(
    options: ParsedEgressOptions,
    private readonly plugin: string,
  ) {
    this.byTool = new ToolSettings(
      Object.entries(options.tools ?? {}).map(([selector, policy]) => [selector, policy.maxPayloadBytes] as const),
    );
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
    return this.byTool.resolve(tool, this.policyOf(tool), this.fallback) ?? NO_LIMIT;
  }

  private policyOf(tool: SluiceTool): number | undefined {
    const raw: unknown = tool.policy.egress;
    if (raw === undefined) return undefined;
    const parsed = EgressPolicy.safeParse(raw);
    if (parsed.success) return parsed.data.maxPayloadBytes;
    const detail = formatIssues(parsed.error, { prefix: ['egress'] });
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
