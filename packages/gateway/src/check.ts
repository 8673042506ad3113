import type { Logger, SkippedTool, SluiceTool } from '@sluice/core';
import type { UpstreamHealth } from '@sluice/upstream';
import { guessableKeys } from '@sluice/http';
import { assess } from '@sluice/plugin-risk';
import type { RiskLevel, ToolReport } from '@sluice/plugin-risk';
import type { GatewayConfig } from './config-schema.js';
import type { CustomPlugin } from './custom-plugins.js';
import { createGateway } from './gateway.js';
import { ledgerMarks } from './ledger-marks.js';
import type { LedgerMark } from './ledger-marks.js';
import { withUpstreamFacts } from './risk-servers.js';

/** One tool as `sluice check` reports it. */
export interface CheckedTool {
  /** The name clients would see. */
  readonly name: string;
  readonly upstream: string | undefined;
  /** Its name at the upstream. */
  readonly originalName: string | undefined;
  /** With the risk plugin configured: its level, floor triggers and scan hits. */
  readonly risk?: ToolRisk;
  /** What the config's risk ledger would do with its calls: hold them for re-review, or refuse them as revoked. */
  readonly ledger?: LedgerMark;
}

export interface ToolRisk {
  readonly level: RiskLevel;
  /** Floor overrides that tripped, the tool's own and its server's. */
  readonly floors: readonly string[];
  /** Poisoning signatures found, as `pattern in surface`. */
  readonly hits: readonly string[];
}

export interface SkippedByCheck extends SkippedTool {
  readonly upstream: string;
}

export interface CheckedUpstream {
  readonly name: string;
  readonly transport: string;
  readonly target: string;
  readonly health: UpstreamHealth;
  readonly lastError: string | undefined;
  /** How many of its tools would be exposed. */
  readonly tools: number;
}

/** A plugin the config loads from a module (`plugins.custom`). */
export interface CheckedPlugin {
  readonly name: string;
  readonly version: string;
  readonly module: string;
  /** Its place in the config, e.g. `plugins.custom[0]`. */
  readonly path: string;
}

export interface CheckOptions {
  /** The config's custom plugins, loaded by `loadCustomPlugins()`: applied and listed. */
  readonly plugins?: readonly CustomPlugin[];
}

export interface CheckReport {
  /** The plugins loaded from modules, in config order. */
  readonly plugins: readonly CheckedPlugin[];
  readonly tools: readonly CheckedTool[];
  readonly skipped: readonly SkippedByCheck[];
  readonly upstreams: readonly CheckedUpstream[];
  /** Whether every upstream answered. */
  readonly healthy: boolean;
  /**
   * The listener's API keys under 128 estimated random bits, by name, with the estimate: while guessers at a
   * key's address are throttled, it is refused with them.
   */
  readonly guessableKeys: readonly { readonly name: string; readonly bits: number }[];
}

/**
 * Builds the gateway a config describes without serving it, imports every
 * upstream, and reports what would be exposed. Nothing outlives it: the
 * store is the in-memory one, and the risk plugin is not run (its ledger
 * would be written); with `plugins.risk` set, its `assess()` judges the
 * imported tools instead, and the config's ledger is read (never written)
 * to mark the tools it would hold or has revoked.
 */
export async function checkGateway(
  config: GatewayConfig,
  logger: Logger,
  options: CheckOptions = {},
): Promise<CheckReport> {
  const custom = options.plugins ?? [];
  const auth = config.listen.http?.auth;
  const dry: GatewayConfig = {
    ...config,
    plugins: { ...config.plugins, risk: undefined },
    store: 'memory',
    telemetry: { ...config.telemetry, tracing: false, metricsPath: false, metricsListen: undefined },
  };
  const gateway = createGateway(dry, { logger, plugins: custom.map((c) => c.plugin) });
  try {
    const imports = await gateway.importUpstreams();
    const skipped: SkippedByCheck[] = imports.flatMap(({ upstream, skipped: s }) =>
      s.map((tool) => ({ ...tool, upstream })),
    );
    const marks = await ledgerMarks(config, gateway.server.tools(), logger);
    const tools = judgeRisk(config, gateway.server.tools(), skipped).map((tool) => {
      const mark = marks.get(tool.name);
      return mark === undefined ? tool : { ...tool, ledger: mark };
    });
    const upstreams = gateway.server.upstreams().map((u) => ({
      name: u.name,
      transport: u.transport,
      target: u.target,
      health: u.health,
      lastError: u.lastError,
      tools: tools.filter((tool) => tool.upstream === u.name).length,
    }));
    return {
      plugins: custom.map(({ plugin, module, path }) => ({ name: plugin.name, version: plugin.version, module, path })),
      tools,
      skipped,
      upstreams,
      healthy: upstreams.every((u) => u.health === 'healthy' || u.health === 'degraded'),
      guessableKeys: auth?.type === 'apiKeys' ? guessableKeys(auth.keys) : [],
    };
  } finally {
    await gateway.close();
  }
}

/**
 * The exposed tools, each with its risk when `plugins.risk` is on; in
 * enforce mode the tools the plugin would keep out move to `skipped`.
 */
function judgeRisk(config: GatewayConfig, exposed: readonly SluiceTool[], skipped: SkippedByCheck[]): CheckedTool[] {
  const tools = exposed.map((tool): CheckedTool => {
    const source = tool.source.kind === 'upstream' ? tool.source : undefined;
    return { name: tool.name, upstream: source?.upstream, originalName: source?.originalName };
  });
  const options = config.plugins.risk;
  if (!options || options.mode === 'off') return tools;
  const report = assess(
    exposed.map((tool, i) => ({
      server: tools[i]?.upstream,
      definition: tool.definition,
      originalName: tools[i]?.originalName,
    })),
    withUpstreamFacts(options, config.upstreams),
  );
  const servers = new Map(report.servers.map((server) => [server.id, server]));
  const kept: CheckedTool[] = [];
  tools.forEach((tool, index) => {
    const judged = report.tools[index] as ToolReport;
    const serverFloors = tool.upstream === undefined ? [] : (servers.get(tool.upstream)?.floors ?? []);
    const risk = {
      level: judged.level,
      floors: [...serverFloors, ...(judged.assessment?.floors ?? [])],
      hits: judged.hits.map((h) => `${h.pattern} in ${h.surface}`),
    };
    if (judged.exposed || options.mode === 'audit') kept.push({ ...tool, risk });
    else
      skipped.push({
        name: tool.name,
        upstream: tool.upstream ?? 'local',
        reason: judged.reason ?? 'kept out by the risk plugin',
        by: 'risk',
      });
  });
  return kept;
}
