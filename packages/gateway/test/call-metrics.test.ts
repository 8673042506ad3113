import { describe, expect, it } from 'vitest';
import type { Outcome } from '@sluice/core';
import { GatewayMetrics } from '../src/call-metrics.js';

const ok: Outcome = { status: 'ok', result: { content: [] }, durationMs: 3 };
const refused: Outcome = {
  status: 'refused',
  code: 'RATE_LIMITED',
  result: { content: [], isError: true },
  durationMs: 1,
};

describe("a tool's metric series", () => {
  it('are the same series for the same tool name, so a call updates them without building label keys', () => {
    const metrics = new GatewayMetrics();
    expect(metrics.forTool('echo')).toBe(metrics.forTool('echo'));
    expect(metrics.forTool('echo')).not.toBe(metrics.forTool('other'));
  });

  it('count what settled(tool, outcome) counts, in the same series', () => {
    const metrics = new GatewayMetrics();
    const echo = metrics.forTool('echo');
    echo.settled(ok);
    metrics.settled('echo', ok);
    echo.settled(refused);
    const text = metrics.render();
    expect(text).toContain('sluice_calls_total{tool="echo",outcome="ok"} 2');
    expect(text).toContain('sluice_calls_total{tool="echo",outcome="refused"} 1');
    expect(text).toContain('sluice_refusals_total{tool="echo",code="RATE_LIMITED"} 1');
    expect(text).toContain('sluice_call_duration_seconds_count{tool="echo"} 3');
    expect(text).toContain('sluice_call_duration_seconds_bucket{tool="echo",le="0.001"} 1');
  });

  it('show an outcome only once a call ended with it, and the in-flight gauge as calls start and end', () => {
    const metrics = new GatewayMetrics();
    const echo = metrics.forTool('echo');
    echo.inFlight.value++;
    const running = metrics.render();
    expect(running).toContain('sluice_calls_in_flight{tool="echo"} 1');
    expect(running).not.toContain('sluice_calls_total{');
    expect(running).not.toContain('sluice_call_duration_seconds_count{');
    echo.inFlight.value--;
    echo.settled(ok);
    const ended = metrics.render();
    expect(ended).toContain('sluice_calls_in_flight{tool="echo"} 0');
    expect(ended).not.toContain('outcome="refused"');
  });
});
