import type { ScriptShareUsage } from '@sluice/plugin-code-mode';
import type { Outcome, ToolCatalog, UpstreamStatus } from '@sluice/core';
import type { UpstreamHealth } from '@sluice/upstream';
import type { GuessUsage, ShareUsage } from '@sluice/http';
import type { GaugeReading, HistogramSeries, Series } from './metrics-registry.js';
import { CollectedGauge, Histogram, LabeledValue, MetricsRegistry } from './metrics-registry.js';

/** Upper bounds of the latency buckets, in seconds: from a loopback hop to a slow upstream. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]);

/**
 * How a call ended, as the `outcome` label says it:
 * - `ok`: a result that is not an error;
 * - `tool_error`: an `isError` result of the tool's own, or passed on from an upstream
 *   (whatever its `_meta` says: an upstream may write any code there);
 * - `refused`: an `isError` result Sluice wrote, with a code in `_meta["dev.sluice/error"]`
 *   (a policy refusal, invalid arguments, an upstream failure); the `code` label keeps
 *   codes of Sluice's shape (`UPPER_CASE`, at most 64 characters), at most 100 distinct, others `OTHER`;
 * - `error`: a JSON-RPC error (unknown tool, malformed metadata, a plugin bug);
 * - `cancelled`: the caller cancelled.
 */
export type CallOutcomeLabel = 'ok' | 'tool_error' | 'refused' | 'error' | 'cancelled';

const HEALTH_STATES: readonly UpstreamHealth[] = ['connecting', 'healthy', 'degraded', 'down'];

/** What the metrics read of a server's tool catalog: whether a tool is exposed, and when tools go. */
export type ExposedTools = Pick<ToolCatalog, 'get' | 'subscribe'>;

/** The gateway's metrics: calls, refusals, in-flight and queued calls, latency, upstream health. */
export class GatewayMetrics {
  readonly registry = new MetricsRegistry();
  readonly calls = this.registry.register(
    new LabeledValue(
      'sluice_calls_total',
      'Tool calls that ended, by tool and outcome (ok, tool_error, refused, error, cancelled).',
      'counter',
      ['tool', 'outcome'],
    ),
  );
  readonly refusals = this.registry.register(
    new LabeledValue(
      'sluice_refusals_total',
      'Calls answered with a Sluice error result (policy refusal, invalid arguments, upstream failure, handler error), by tool and code.',
      'counter',
      ['tool', 'code'],
    ),
  );
  readonly errors = this.registry.register(
    new LabeledValue(
      'sluice_call_errors_total',
      'Calls that failed with a JSON-RPC error, by tool and code.',
      'counter',
      ['tool', 'code'],
    ),
  );
  readonly inFlight = this.registry.register(
    new LabeledValue('sluice_calls_in_flight', 'Calls running now, by tool.', 'gauge', ['tool']),
  );
  readonly queued = this.registry.register(
    new LabeledValue(
      'sluice_calls_queued',
      'Calls waiting for admission by the concurrency plugin (a slot or the intent mutex), by tool.',
      'gauge',
      ['tool'],
    ),
  );
  readonly duration = this.registry.register(
    new Histogram(
      'sluice_call_duration_seconds',
      'Call latency through the whole pipeline, by tool.',
      ['tool'],
      LATENCY_BUCKETS_SECONDS,
    ),
  );

  readonly refusalCodes = new CodeLabels();
  readonly errorCodes = new CodeLabels();
  /** The series of the tools called so far that are still exposed. */
  private readonly tools = new Map<string, ToolMetrics>();
  /** The catalogs that say which tools are exposed; with none, every tool called is. */
  private readonly catalogs = new Set<ExposedTools>();

  /**
   * One tool's series, their label keys built once: what a call updates.
   * Kept per tool name, as the series themselves are, while the tool is
   * exposed; a call of a tool that is not (it went before the call got here)
   * gets series that no scrape shows.
   */
  forTool(tool: string): ToolMetrics {
    const found = this.tools.get(tool);
    if (found !== undefined) return found;
    if (!this.exposes(tool)) return new ToolMetrics(this, tool, false);
    const made = new ToolMetrics(this, tool, true);
    this.tools.set(tool, made);
    return made;
  }

  /**
   * Keeps series only for the tools `catalog` exposes: a tool's series go
   * when the catalog stops exposing it, so that a server whose upstreams
   * rename their tools does not grow its metrics. Returns the function that
   * stops following it.
   */
  follow(catalog: ExposedTools): () => void {
    this.catalogs.add(catalog);
    const unsubscribe = catalog.subscribe(({ removed }) => {
      for (const { name } of removed) if (!this.exposes(name)) this.drop(name);
    });
    return () => {
      unsubscribe();
      this.catalogs.delete(catalog);
    };
  }

  private exposes(tool: string): boolean {
    if (this.catalogs.size === 0) return true;
    for (const catalog of this.catalogs) if (catalog.get(tool) !== undefined) return true;
    return false;
  }

  private drop(tool: string): void {
    const series = this.tools.get(tool);
    if (series === undefined) return;
    this.tools.delete(tool);
    series.drop();
  }

  /** Records a call that ended. */
  settled(tool: string, outcome: Outcome): void {
    this.forTool(tool).settled(outcome);
  }

  /** Serves upstream health, read at each scrape. */
  watchUpstreams(list: () => readonly UpstreamStatus[]): void {
    this.registry.register(
      new CollectedGauge('sluice_upstream_up', 'Whether the upstream is connected (1) or not (0).', ['upstream'], () =>
        list().map(upReading),
      ),
    );
    this.registry.register(
      new CollectedGauge(
        'sluice_upstream_health',
        'The upstream health state: 1 for the current state, 0 for the others.',
        ['upstream', 'state'],
        () =>
          list().flatMap((u) =>
            HEALTH_STATES.map((state): GaugeReading => ({
              labels: [u.name, state],
              value: u.health === state ? 1 : 0,
            })),
          ),
      ),
    );
    this.registry.register(
      new CollectedGauge('sluice_upstream_tools', 'Tools exposed from the upstream now.', ['upstream'], () =>
        list().map((u) => ({ labels: [u.name], value: u.tools.length })),
      ),
    );
  }

  /** Serves the HTTP listener's connection and held-stream shares, read at each scrape (before it listens: nothing). */
  watchShares(usage: () => ShareUsage | undefined): void {
    const limits = (u: ShareUsage) => Object.entries(u.limits) as [string, number][];
    this.registry.register(
      new CollectedGauge(
        'sluice_http_share_limit',
        "The HTTP listener's shares: connections (all, unauthenticated, per caller), held streams (all, per caller), and the idle time that closes a held stream (ms).",
        ['share'],
        () => {
          const u = usage();
          return u ? limits(u).map(([share, value]) => ({ labels: [share], value })) : [];
        },
      ),
    );
    this.registry.register(
      new CollectedGauge(
        'sluice_http_connections',
        'Open HTTP connections: unauthenticated (no request admitted yet) or admitted.',
        ['state'],
        () => {
          const u = usage();
          return u
            ? [
                { labels: ['unauthenticated'], value: u.unauthenticatedConnections },
                { labels: ['admitted'], value: u.authenticatedConnections },
              ]
            : [];
        },
      ),
    );
    this.registry.register(
      new CollectedGauge('sluice_http_held_streams', 'Held event streams open now.', [], () => {
        const u = usage();
        return u ? [{ labels: [], value: u.heldStreams }] : [];
      }),
    );
    this.registry.register(
      new CollectedGauge(
        'sluice_http_share_refusals_total',
        'Connections closed or requests refused (429) past a share, by share; idleStream counts held streams closed for idling.',
        ['share'],
        () => {
          const u = usage();
          if (!u) return [];
          const refused = Object.entries(u.refused).map(([share, value]) => ({ labels: [share], value }));
          return [...refused, { labels: ['idleStream'], value: u.idleStreamsClosed }];
        },
        'counter',
      ),
    );
  }

  /** Serves the credentials the HTTP listener refused, read at each scrape; the only label is the outcome. */
  watchGuesses(usage: () => GuessUsage | undefined): void {
    this.registry.register(
      new CollectedGauge(
        'sluice_http_auth_failures_total',
        'Credentials refused: refused after a check, or throttled (refused unchecked, their source having guessed too often).',
        ['outcome'],
        () => {
          const u = usage();
          return u
            ? [
                { labels: ['refused'], value: u.refused },
                { labels: ['throttled'], value: u.throttled },
              ]
            : [];
        },
        'counter',
      ),
    );
  }

  /** Serves code mode's script shares, read at each scrape. */
  watchScripts(usage: () => ScriptShareUsage): void {
    this.registry.register(
      new CollectedGauge('sluice_code_mode_scripts', 'Code-mode scripts running now.', [], () => [
        { labels: [], value: usage().running },
      ]),
    );
    this.registry.register(
      new CollectedGauge(
        'sluice_code_mode_script_share_limit',
        'Code-mode script slots: on the server (maxConcurrentScripts) and per caller (maxScriptsPerCaller).',
        ['share'],
        () => {
          const u = usage();
          return [
            { labels: ['server'], value: u.maxConcurrentScripts },
            { labels: ['caller'], value: u.maxScriptsPerCaller },
          ];
        },
      ),
    );
    this.registry.register(
      new CollectedGauge(
        'sluice_code_mode_cpu_share',
        "The fraction of one core a caller's scripts may use on average (cpuSharePerCaller).",
        [],
        () => [{ labels: [], value: usage().cpuSharePerCaller }],
      ),
    );
    this.registry.register(
      new CollectedGauge(
        'sluice_code_mode_cpu_seconds_total',
        "CPU time charged to callers for their scripts: the workers' and the main thread's.",
        [],
        () => [{ labels: [], value: usage().cpuChargedMs / 1000 }],
        'counter',
      ),
    );
    this.registry.register(
      new CollectedGauge(
        'sluice_code_mode_script_refusals_total',
        "Scripts refused with SCRIPTS_BUSY: their caller's slots were full, the server's, or their caller owed CPU.",
        ['share'],
        () => {
          const u = usage();
          return [
            { labels: ['caller'], value: u.refused.caller },
            { labels: ['server'], value: u.refused.server },
            { labels: ['cpu'], value: u.refused.cpu },
          ];
        },
        'counter',
      ),
    );
    this.registry.register(
      new CollectedGauge(
        'sluice_code_mode_pause_refusals_total',
        "Scripts that could not pause (JOURNALS_FULL): their caller's share of paused scripts was full, or the server's.",
        ['share'],
        () => {
          const refused = usage().pausesRefused ?? { caller: 0, server: 0 };
          return [
            { labels: ['caller'], value: refused.caller },
            { labels: ['server'], value: refused.server },
          ];
        },
        'counter',
      ),
    );
  }

  render(): string {
    return this.registry.render();
  }
}

/** One tool's metric series, held so that a call updates them without building a label key. */
export class ToolMetrics {
  /** `sluice_calls_in_flight` for this tool: add 1 when a call starts, -1 when it ends. */
  readonly inFlight: Series;
  private queuedSeries: Series | undefined;
  private duration: HistogramSeries | undefined;
  /** `sluice_calls_total` by outcome, made on the outcome's first call (a counter never moved is not shown). */
  private readonly byOutcome = new Map<string, Series>();
  /** `sluice_refusals_total` and `sluice_call_errors_total` by code label (at most `MAX_CODES` + 1 each). */
  private readonly byRefusal = new Map<string, Series>();
  private readonly byError = new Map<string, Series>();

  constructor(
    private readonly metrics: GatewayMetrics,
    readonly tool: string,
    /** Whether the series are shown: false once the tool is no longer exposed. */
    private shown: boolean,
  ) {
    this.inFlight = shown ? metrics.inFlight.at([tool]) : { labels: [tool], value: 0 };
  }

  /** `sluice_calls_queued` for this tool, made when a call of it first waits (a tool no call waited for shows none). */
  get queued(): Series {
    this.queuedSeries ??= this.shown ? this.metrics.queued.at([this.tool]) : { labels: [this.tool], value: 0 };
    return this.queuedSeries;
  }

  /** Records a call that ended; a call of a tool no longer exposed is not counted. */
  settled(outcome: Outcome): void {
    if (!this.shown) return;
    const { metrics, tool } = this;
    const label = outcomeLabel(outcome);
    held(this.byOutcome, metrics.calls, tool, label).value++;
    if (label === 'refused')
      held(this.byRefusal, metrics.refusals, tool, metrics.refusalCodes.of(refusalCode(outcome))).value++;
    else if (outcome.status === 'error')
      held(this.byError, metrics.errors, tool, metrics.errorCodes.of(outcome.error.code)).value++;
    this.duration ??= metrics.duration.at([tool]);
    metrics.duration.record(this.duration, outcome.durationMs / 1000);
  }

  /** Takes every series of the tool out of the metrics: the tool is gone. Calls still running update nothing shown. */
  drop(): void {
    if (!this.shown) return;
    this.shown = false;
    const { metrics, tool } = this;
    metrics.inFlight.remove([tool]);
    if (this.queuedSeries !== undefined) metrics.queued.remove([tool]);
    if (this.duration !== undefined) metrics.duration.remove([tool]);
    for (const label of this.byOutcome.keys()) metrics.calls.remove([tool, label]);
    for (const code of this.byRefusal.keys()) metrics.refusals.remove([tool, code]);
    for (const code of this.byError.keys()) metrics.errors.remove([tool, code]);
  }
}

/** A tool's series of `family` whose second label is `label`, kept in `series` once made. */
function held(series: Map<string, Series>, family: LabeledValue, tool: string, label: string): Series {
  let found = series.get(label);
  if (found === undefined) {
    found = family.at([tool, label]);
    series.set(label, found);
  }
  return found;
}

export function outcomeLabel(outcome: Outcome): CallOutcomeLabel {
  switch (outcome.status) {
    case 'refused':
      return 'refused';
    case 'error':
      return 'error';
    case 'cancelled':
      return 'cancelled';
    case 'ok':
      // Sluice's own refusals arrive as `refused`; an error result that merely carries a refusal's
      // `_meta` came from the tool (or an upstream, which may write anything there).
      return outcome.result.isError ? 'tool_error' : 'ok';
  }
}

/** Codes are written by Sluice and its plugins: upper-case words. Anything else is counted as `OTHER`. */
const CODE_SHAPE = /^[A-Z][A-Z0-9_]{0,63}$/;
/** Distinct codes a metric keeps as labels; later new ones count as `OTHER`. */
const MAX_CODES = 100;

/** Maps codes onto a bounded set of labels: well-formed, short, and at most `MAX_CODES` distinct. */
export class CodeLabels {
  private readonly seen = new Set<string>();

  of(code: string | undefined): string {
    if (code === undefined || !CODE_SHAPE.test(code)) return 'OTHER';
    if (this.seen.has(code)) return code;
    if (this.seen.size >= MAX_CODES) return 'OTHER';
    this.seen.add(code);
    return code;
  }
}

function refusalCode(outcome: Outcome): string | undefined {
  return outcome.status === 'refused' ? outcome.code : undefined;
}

function upReading(upstream: UpstreamStatus): GaugeReading {
  return { labels: [upstream.name], value: upstream.health === 'healthy' || upstream.health === 'degraded' ? 1 : 0 };
}
