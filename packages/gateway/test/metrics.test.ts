import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { PROMETHEUS_CONTENT_TYPE, createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { call, eventually, fixtureUpstream, httpClient, sample } from './helpers.js';

let gateway: Gateway;
let client: Client;
let mcpUrl: URL;
let metricsUrl: URL;

const scrape = async (): Promise<string> => (await fetch(metricsUrl)).text();

beforeAll(async () => {
  gateway = createGateway(
    {
      listen: { http: { port: 0 } },
      upstreams: [
        fixtureUpstream('up'),
        // Exits at once: it stays down, and is retried only long after the test.
        {
          name: 'broken',
          connection: { type: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'] },
          retry: { initialDelayMs: 600_000, maxDelayMs: 600_000 },
        },
      ],
      plugins: {
        concurrency: { tools: { up_hold: { maxActive: 1, maxQueue: 2 }, up_echo: { maxActive: 8, maxQueue: 8 } } },
      },
    },
    { logger: captureLogger().logger },
  );
  const { http } = await gateway.start();
  mcpUrl = http!.url;
  metricsUrl = new URL('/metrics', mcpUrl);
  client = await httpClient(mcpUrl);
});

afterAll(async () => {
  await client.close();
  await gateway.close();
});

describe('/metrics', () => {
  it('carries the process metrics beside its own: memory, heap, event-loop lag, GC pauses, open fds', async () => {
    const body = await scrape();
    for (const family of [
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_gc_duration_seconds',
      'process_open_fds',
    ]) {
      expect(body, family).toMatch(new RegExp(`^# TYPE ${family} `, 'm'));
    }
    expect(sample(body, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(body, 'process_open_fds')).toBeGreaterThan(0);
    // Each family appears once, the gateway's own included.
    const types = [...body.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    expect(new Set(types).size).toBe(types.length);
    expect(types).toContain('sluice_calls_total');
  });

  it('counts a scripted run exactly: 3 ok calls and 1 refusal of one tool', async () => {
    for (const text of ['a', 'b', 'c']) expect(textOf(await call(client, 'up_echo', { text }))).toBe(text);
    const filtered = await httpClient(mcpUrl, { 'x-sluice-exclude-servers': 'up' });
    expect(errorOf(await call(filtered, 'up_echo', { text: 'd' }))?.code).toBe('TOOL_NOT_AVAILABLE');
    await filtered.close();

    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(PROMETHEUS_CONTENT_TYPE);
    const body = await response.text();
    expect(sample(body, 'sluice_calls_total{tool="up_echo",outcome="ok"}')).toBe(3);
    expect(sample(body, 'sluice_calls_total{tool="up_echo",outcome="refused"}')).toBe(1);
    expect(sample(body, 'sluice_refusals_total{tool="up_echo",code="TOOL_NOT_AVAILABLE"}')).toBe(1);
    expect(sample(body, 'sluice_calls_in_flight{tool="up_echo"}')).toBe(0);
    // Every call of the guarded tool was admitted at once: none waited, so it has no queued series at all.
    expect(body).not.toContain('sluice_calls_queued{tool="up_echo"}');
    expect(sample(body, 'sluice_call_duration_seconds_count{tool="up_echo"}')).toBe(4);
    expect(sample(body, 'sluice_call_duration_seconds_bucket{tool="up_echo",le="+Inf"}')).toBe(4);
    expect(sample(body, 'sluice_call_duration_seconds_bucket{tool="up_echo",le="60"}')).toBe(4);
    expect(body).toContain('# TYPE sluice_calls_total counter\n');
    expect(body).toContain('# TYPE sluice_call_duration_seconds histogram\n');
    expect(body.endsWith('\n')).toBe(true);
  });

  it('shows upstream health as gauges: a connected upstream is up, one that cannot start is down', async () => {
    const body = await scrape();
    expect(sample(body, 'sluice_upstream_up{upstream="up"}')).toBe(1);
    expect(sample(body, 'sluice_upstream_health{upstream="up",state="healthy"}')).toBe(1);
    expect(sample(body, 'sluice_upstream_health{upstream="up",state="down"}')).toBe(0);
    expect(sample(body, 'sluice_upstream_tools{upstream="up"}')).toBe(7);
    expect(sample(body, 'sluice_upstream_up{upstream="broken"}')).toBe(0);
    expect(sample(body, 'sluice_upstream_health{upstream="broken",state="down"}')).toBe(1);
  });

  it('shows the calls waiting for a concurrency slot, and counts the one shed when the queue is full', async () => {
    const held = [call(client, 'up_hold'), call(client, 'up_hold'), call(client, 'up_hold')];
    await eventually(
      async () => sample(await scrape(), 'sluice_calls_queued{tool="up_hold"}') === 2,
      'two calls queued behind the running one',
    );
    expect(sample(await scrape(), 'sluice_calls_in_flight{tool="up_hold"}')).toBe(3);
    expect(errorOf(await call(client, 'up_hold'))?.code).toBe('SERVER_BUSY');
    expect(textOf(await call(client, 'up_release'))).toBe('released 1');
    expect((await Promise.all(held)).map(textOf)).toEqual(['released', 'released', 'released']);
    const body = await scrape();
    expect(sample(body, 'sluice_calls_queued{tool="up_hold"}')).toBe(0);
    expect(sample(body, 'sluice_calls_in_flight{tool="up_hold"}')).toBe(0);
    expect(sample(body, 'sluice_calls_total{tool="up_hold",outcome="ok"}')).toBe(3);
    expect(sample(body, 'sluice_refusals_total{tool="up_hold",code="SERVER_BUSY"}')).toBe(1);
  });

  it('answers anything but GET and HEAD with 405', async () => {
    expect((await fetch(metricsUrl, { method: 'POST', body: '' })).status).toBe(405);
    expect((await fetch(metricsUrl, { method: 'HEAD' })).status).toBe(200);
  });
});
