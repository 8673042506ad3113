import { MetaKey } from '@sluice/core';
import type { SluiceTool, Tool } from '@sluice/core';
import { isPlainObject } from '../definition.js';
import type { RiskLevel } from '../scoring/levels.js';

/** What `tools/list` publishes under `_meta["dev.sluice/risk"]`. */
export interface PublishedRisk {
  readonly level: RiskLevel;
  readonly server: RiskLevel;
  readonly tool: RiskLevel;
  /** Floor overrides that tripped, server's and tool's. */
  readonly floors: readonly string[];
  /** Marked for human approval. */
  readonly hitl: boolean;
  /** Poisoning signatures found (under the `warn` policy the tool is still exposed). */
  readonly poisoning: readonly string[];
  /** The outside judge's poisoned verdict (`scan.judge`), when it gave one: its reason and severity. */
  readonly judge?: { readonly reason: string; readonly severity: string };
}

/** Writes the tool's published risk into its definition's `_meta`. */
export function publish(tool: SluiceTool, risk: PublishedRisk): void {
  const meta = isPlainObject(tool.definition._meta) ? tool.definition._meta : {};
  // Always overwritten: an upstream must not pre-fill its own risk level.
  tool.definition = { ...tool.definition, _meta: { ...meta, [MetaKey.RISK]: risk } };
}

/** What the import published for a tool; fields may be missing on a tool the plugin never saw. */
export function publishedRiskOf(definition: Tool): Partial<PublishedRisk> | undefined {
  return definition._meta?.[MetaKey.RISK] as Partial<PublishedRisk> | undefined;
}
