import { readRefusal } from '@sluice/core';
import type { Outcome, UpstreamHealth, UpstreamStatus } from '@sluice/core';
import type { GaugeReading } from './metrics-registry.js';
import { CollectedGauge, Histogram, LabeledValue, MetricsRegistry } from './metrics-registry.js';

/** Upper bounds of the latency buckets, in seconds: from a loopback hop to a slow upstream. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]);

/**
 * How a call ended, as the `outcome` label says it:
 * - `ok`: a result that is not an error;
 * - `tool_error`: an `isError` result of the tool's own (no Sluice code);
 * - `refused`: an `isError` result Sluice wrote, with a code in `_meta["dev.sluice/error"]`
 *   (a policy refusal, invalid arguments, an upstream failure, a handler that threw);
 * - `error`: a JSON-RPC error (unknown tool, malformed metadata, a plugin bug);
 * - `cancelled`: the caller cancelled.
 */
export type CallOutcomeLabel = 'ok' | 'tool_error' | 'refused' | 'error' | 'cancelled';

const HEALTH_STATES: readonly UpstreamHealth[] = ['connecting', 'healthy', 'degraded', 'down'];

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

  /** Records a call that ended. */
  settled(tool: string, outcome: Outcome): void {
    const label = outcomeLabel(outcome);
    this.calls.add([tool, label]);
    if (label === 'refused') this.refusals.add([tool, refusalCode(outcome)]);
    else if (outcome.status === 'error') this.errors.add([tool, outcome.error.code]);
    this.duration.observe([tool], outcome.durationMs / 1000);
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

  render(): string {
    return this.registry.render();
  }
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
      if (!outcome.result.isError) return 'ok';
      return readRefusal(outcome.result) === undefined ? 'tool_error' : 'refused';
  }
}

function refusalCode(outcome: Outcome): string {
  if (outcome.status === 'refused') return outcome.code;
  return (outcome.status === 'ok' && readRefusal(outcome.result)?.code) || 'REFUSED';
}

function upReading(upstream: UpstreamStatus): GaugeReading {
  return { labels: [upstream.name], value: upstream.health === 'healthy' || upstream.health === 'degraded' ? 1 : 0 };
}
