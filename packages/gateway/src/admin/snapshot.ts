import type { SkippedTool, SluiceServer, SluiceTool } from '@sluice/core';
import type { UpstreamHealth } from '@sluice/upstream';
import { MetaKey } from '@sluice/core';
import { PoisonPattern, assess } from '@sluice/plugin-risk';
import type { PublishedRisk, ScanHit, ServerReport } from '@sluice/plugin-risk';
import type { GatewayMetrics } from '../call-metrics.js';
import type { GatewayConfig } from '../config-schema.js';
import { withUpstreamFacts } from '../risk-servers.js';
import type { LedgerRow } from './ledger-view.js';

/** An upstream as the console shows it. */
export interface UpstreamView {
  readonly name: string;
  readonly transport: string;
  readonly target: string;
  readonly health: UpstreamHealth;
  readonly since: number;
  /** Why it is degraded or down, with the upstream's secrets already masked by core. */
  readonly lastError: string | undefined;
  readonly tools: number;
  /** With `plugins.risk`: the server's level, axes and floor triggers. */
  readonly risk: Pick<ServerReport, 'level' | 'total' | 'axes' | 'floors' | 'hostClass' | 'trust'> | undefined;
}

/** An exposed tool as the console shows it. */
export interface ToolView {
  readonly name: string;
  readonly upstream: string | undefined;
  readonly originalName: string | undefined;
  readonly description: string;
  /** What the risk plugin published for it (`_meta["dev.sluice/risk"]`). */
  readonly risk: Partial<PublishedRisk> | undefined;
  /** Poisoning signatures with the text around each. */
  readonly hits: readonly ScanHit[];
  /** `held` (awaiting re-review) or `revoked` from the ledger; `active` otherwise. */
  readonly state: 'active' | 'held' | 'revoked';
}

export interface SkippedView extends SkippedTool {
  readonly upstream: string;
}

export interface LiveView {
  /** Calls that ended per second, over the last sampling window, by tool. */
  readonly rates: ReadonlyArray<{ readonly tool: string; readonly perSecond: number }>;
  readonly inFlight: ReadonlyArray<{ readonly tool: string; readonly value: number }>;
  readonly queued: ReadonlyArray<{ readonly tool: string; readonly value: number }>;
  readonly refusals: ReadonlyArray<{ readonly tool: string; readonly code: string; readonly count: number }>;
}

/** What the admin surface reads from a running gateway. */
export interface AdminSources {
  readonly server: SluiceServer;
  readonly config: GatewayConfig;
  readonly skipped: () => readonly SkippedView[];
  readonly metrics: GatewayMetrics | undefined;
}

/** The upstreams with their health and, with the risk plugin, their server risk. */
export function upstreamViews(sources: AdminSources): UpstreamView[] {
  const reports = riskReport(sources);
  const servers = new Map(reports?.servers.map((s) => [s.id, s]));
  return sources.server.upstreams().map((u) => {
    const report = servers.get(u.name);
    return {
      name: u.name,
      transport: u.transport,
      target: u.target,
      health: u.health,
      since: u.since,
      lastError: u.lastError,
      tools: u.tools.length,
      risk: report
        ? {
            level: report.level,
            total: report.total,
            axes: report.axes,
            floors: report.floors,
            hostClass: report.hostClass,
            trust: report.trust,
          }
        : undefined,
    };
  });
}

/** Every registered tool with its published risk, scan hits and ledger state. */
export function toolViews(sources: AdminSources, ledger: readonly LedgerRow[]): ToolView[] {
  const tools = sources.server.tools();
  const report = riskReport(sources, tools);
  const states = new Map(ledger.flatMap((row) => (row.name === undefined ? [] : [[row.name, row.lifecycle] as const])));
  return tools.map((tool, i) => {
    const source = tool.source.kind === 'upstream' ? tool.source : undefined;
    const lifecycle = states.get(tool.name);
    return {
      name: tool.name,
      upstream: source?.upstream,
      originalName: source?.originalName,
      description: tool.definition.description ?? '',
      risk: tool.definition._meta?.[MetaKey.RISK] as Partial<PublishedRisk> | undefined,
      hits: withJudge(report?.tools[i]?.hits ?? [], tool.definition._meta?.[MetaKey.RISK] as Partial<PublishedRisk>),
      state: lifecycle === 'REVOKED' ? 'revoked' : lifecycle === 'AWAITING_REREVIEW' ? 'held' : 'active',
    };
  });
}

/** The outside judge's verdict, which only the import saw, published in `_meta`: shown with the scan's hits. */
function withJudge(hits: readonly ScanHit[], published: Partial<PublishedRisk> | undefined): readonly ScanHit[] {
  const judge = published?.judge;
  if (judge === undefined) return hits;
  const severity = (['high', 'medium', 'low'] as const).find((s) => s === judge.severity) ?? 'high';
  return [...hits, { pattern: PoisonPattern.JUDGE_VERDICT, severity, surface: '/', excerpt: judge.reason }];
}

/** The risk plugin's judgement of the tools registered now, or undefined without the plugin. */
function riskReport(sources: AdminSources, tools: readonly SluiceTool[] = sources.server.tools()) {
  const options = sources.config.plugins.risk;
  if (!options || options.mode === 'off') return undefined;
  return assess(
    tools.map((tool) => {
      const source = tool.source.kind === 'upstream' ? tool.source : undefined;
      return {
        ...(source ? { server: source.upstream, originalName: source.originalName } : {}),
        definition: tool.definition,
      };
    }),
    withUpstreamFacts(options, sources.config.upstreams),
  );
}

/**
 * Calls per second from the metrics' call counters, sampled at each read:
 * the rate over the time since the previous read (at least a second back).
 */
export class LiveRates {
  private previous: { at: number; totals: Map<string, number> } | undefined;
  private rates: Array<{ tool: string; perSecond: number }> = [];

  constructor(private readonly now: () => number = Date.now) {}

  read(metrics: GatewayMetrics | undefined): LiveView {
    if (metrics === undefined) return { rates: [], inFlight: [], queued: [], refusals: [] };
    this.sample(metrics);
    const gauge = (readings: ReturnType<GatewayMetrics['inFlight']['readings']>) =>
      readings.filter((r) => r.value > 0).map((r) => ({ tool: r.labels[0] ?? '', value: r.value }));
    return {
      rates: this.rates,
      inFlight: gauge(metrics.inFlight.readings()),
      queued: gauge(metrics.queued.readings()),
      refusals: metrics.refusals
        .readings()
        .map((r) => ({ tool: r.labels[0] ?? '', code: r.labels[1] ?? '', count: r.value })),
    };
  }

  private sample(metrics: GatewayMetrics): void {
    const at = this.now();
    if (this.previous && at - this.previous.at < 1_000) return;
    const totals = new Map<string, number>();
    for (const r of metrics.calls.readings())
      totals.set(r.labels[0] ?? '', (totals.get(r.labels[0] ?? '') ?? 0) + r.value);
    if (this.previous) {
      const seconds = (at - this.previous.at) / 1_000;
      const before = this.previous.totals;
      this.rates = [...totals].map(([tool, total]) => ({
        tool,
        perSecond: Math.round(((total - (before.get(tool) ?? 0)) / seconds) * 100) / 100,
      }));
    }
    this.previous = { at, totals };
  }
}
