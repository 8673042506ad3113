import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Stage, definePlugin } from '@sluice/core';
import type { Executor } from '@sluice/core';
import type { LogRecord } from '@sluice/testing';
import { createTestKit, errorOf, textOf } from '@sluice/testing';
import { RiskErrorCode, RiskEvent, risk } from '@sluice/plugin-risk';
import type { RiskOptions } from '@sluice/plugin-risk';
import { accept, approvalServer, legacyClient, manualClient, no } from './approval-helpers.js';
import type { ApprovalServer } from './approval-helpers.js';
import { official, riskKit, upstream } from './helpers.js';
import type { RiskKit } from './helpers.js';
import '@sluice/http';
import '@sluice/upstream';

const CALL_EVENTS: readonly string[] = [RiskEvent.TOOL_START, RiskEvent.TOOL_DONE, RiskEvent.TOOL_CRASH];

/** The call events in the order they were written. */
function callEvents(records: readonly LogRecord[]): LogRecord[] {
  return records.filter((r) => CALL_EVENTS.includes(r.event as string));
}

/** One start, then exactly one of done and crash, for the same tool. */
function expectOnePair(records: readonly LogRecord[], tool: string, end: 'tool.done' | 'tool.crash'): LogRecord {
  const events = callEvents(records).filter((r) => r.tool === tool);
  expect(events.map((r) => r.event)).toEqual([RiskEvent.TOOL_START, end]);
  const last = events[1] as LogRecord;
  expect(typeof last.durationMs).toBe('number');
  expect(last.durationMs as number).toBeGreaterThanOrEqual(0);
  return last;
}

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function kit(options: RiskOptions = {}, kitOptions: Parameters<typeof riskKit>[1] = {}): Promise<RiskKit> {
  const k = await riskKit(options, kitOptions);
  open.push(k);
  return k;
}

const ALL: RiskOptions = { calls: { events: 'all' } };
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

describe('tool.start, then exactly one of tool.done and tool.crash', () => {
  it('logs a local call as start and done, with the duration and the L0 level (calls.events: all)', async () => {
    const k = await kit(ALL, { tools: [{ name: 'echo', handler: () => text('hi') }] });
    await k.call('echo');
    const done = expectOnePair(k.logs.records, 'echo', 'tool.done');
    expect(done).toMatchObject({ outcome: 'ok', risk: 'L0', hitl: false, plugin: 'risk' });
    expect(done.upstream).toBeUndefined();
    expect(callEvents(k.logs.records)[0]).toMatchObject({ event: 'tool.start', tool: 'echo', risk: 'L0' });
  });

  it('names the upstream by its configured name, never the name it reports, and carries the composed risk', async () => {
    const k = await kit({ servers: { dict: official } });
    await k.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream('impostor') } });
    await k.call('lookup', { word: 'sluice' });
    const done = expectOnePair(k.logs.records, 'lookup', 'tool.done');
    expect(done).toMatchObject({
      upstream: 'dict',
      upstreamTool: 'lookup',
      risk: 'L1',
      riskServer: 'L1',
      riskTool: 'L1',
      outcome: 'ok',
    });
    expect(k.logs.text()).not.toMatch(/"upstream":"impostor"/);
  });

  it('logs tool.crash when a local handler throws', async () => {
    const k = await kit(ALL, {
      tools: [
        {
          name: 'broken',
          handler: () => {
            throw new Error('boom');
          },
        },
      ],
    });
    expect((await k.call('broken')).isError).toBe(true);
    expect(expectOnePair(k.logs.records, 'broken', 'tool.crash')).toMatchObject({ outcome: 'tool-error', level: 40 });
  });

  it('logs tool.crash with the code when the upstream fails (UPSTREAM_TIMEOUT)', async () => {
    const up = new McpServer({ name: 'slow', version: '1.0.0' });
    up.registerTool(
      'wait',
      { description: 'Waits for a long time before it answers anything.', inputSchema: z.object({}) },
      () => new Promise(() => {}),
    );
    const k = await kit();
    await k.server.import({ name: 'slow', connection: { type: 'in-process', server: up }, timeoutMs: 50 });
    expect(errorOf(await k.call('wait'))?.code).toBe('UPSTREAM_TIMEOUT');
    expect(expectOnePair(k.logs.records, 'wait', 'tool.crash')).toMatchObject({
      outcome: 'upstream-error',
      code: 'UPSTREAM_TIMEOUT',
      upstream: 'slow',
    });
  });

  it('logs tool.done refused, not a crash, when an upstream answer passes its read cap (UPSTREAM_RESPONSE_TOO_LARGE)', async () => {
    const up = new McpServer({ name: 'files', version: '1.0.0' });
    up.registerTool(
      'read',
      { description: 'Reads a whole file and returns its text.', inputSchema: z.object({}) },
      () => text('f'.repeat(50_000)),
    );
    // What egress does for an imported tool: a cap on the bytes the proxy reads of its answers.
    const readCap = definePlugin({
      name: 'read-cap',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.import.tap({ name: 'read-cap', stage: Stage.LAST }, (batch) => {
          for (const tool of batch.tools) tool.responseLimitBytes = 4_096;
          return batch;
        }),
    });
    const k = await createTestKit({ plugins: [risk({ ledger: { persist: 'memory' } }), readCap] });
    open.push(k);
    await k.server.import({ name: 'files', connection: { type: 'in-process', server: up } });
    expect(errorOf(await k.call('read'))?.code).toBe('UPSTREAM_RESPONSE_TOO_LARGE');
    expect(expectOnePair(k.logs.records, 'read', 'tool.done')).toMatchObject({
      outcome: 'refused',
      code: 'UPSTREAM_RESPONSE_TOO_LARGE',
      upstream: 'files',
    });
  });

  it('logs tool.crash with the code when a plugin fails the call', async () => {
    const failing = definePlugin({
      name: 'failing',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.preCall.tap({ name: 'failing', stage: Stage.DEFAULT }, () => {
          throw new Error('plugin bug');
        }),
    });
    const withBug = await createTestKit({
      plugins: [risk({ ledger: { persist: 'memory' }, ...ALL }), failing],
      tools: [{ name: 'echo', handler: () => text('hi') }],
    });
    open.push(withBug);
    await expect(withBug.call('echo')).rejects.toThrow(/Internal error in plugin "failing"/);
    expect(expectOnePair(withBug.logs.records, 'echo', 'tool.crash')).toMatchObject({
      outcome: 'error',
      code: 'PLUGIN_FAILED',
    });
  });

  it('logs tool.crash when the caller cancels', async () => {
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    const k = await kit(ALL, {
      tools: [
        {
          name: 'slow',
          handler: (_a, ctx) =>
            new Promise((_r, reject) => {
              started();
              ctx.signal.addEventListener('abort', () => reject(new Error('stopped')));
            }),
        },
      ],
    });
    const abort = new AbortController();
    const call = k.server.call('slow', {}, { signal: abort.signal });
    await running;
    abort.abort();
    await expect(call).rejects.toThrow(/cancelled/);
    expect(expectOnePair(k.logs.records, 'slow', 'tool.crash')).toMatchObject({ outcome: 'cancelled' });
  });

  it('logs a policy refusal as tool.done with its code: nothing crashed, a guard did its work', async () => {
    const s = await approvalServer(ALL);
    open.push(s);
    const client = await legacyClient(s.server, no);
    open.push(client);
    expect(errorOf(await client.call('deploy', { env: 'prod' }))?.code).toBe(RiskErrorCode.APPROVAL_DECLINED);
    expect(expectOnePair(s.logs.records, 'deploy', 'tool.done')).toMatchObject({
      outcome: 'refused',
      code: RiskErrorCode.APPROVAL_DECLINED,
      hitl: true,
    });
  });

  it('logs arguments refused before preCall as one pair too', async () => {
    const s = await approvalServer(ALL);
    open.push(s);
    expect(errorOf(await s.server.call('deploy', { env: 7 }))?.code).toBe('INVALID_ARGUMENTS');
    expect(expectOnePair(s.logs.records, 'deploy', 'tool.done')).toMatchObject({
      outcome: 'refused',
      code: 'INVALID_ARGUMENTS',
    });
  });

  it('logs each 2026-07-28 round as its own pair: input-required, then the approved run', async () => {
    const s: ApprovalServer = await approvalServer(ALL);
    open.push(s);
    const client = await manualClient((await s.server.listen()).url);
    open.push(client);
    const { requestState } = await client.first('deploy', { env: 'prod' });
    expect(textOf(await client.retry('deploy', { env: 'prod' }, requestState, accept))).toBe('deployed to prod');
    const events = callEvents(s.logs.records).filter((r) => r.tool === 'deploy');
    expect(events.map((r) => [r.event, r.outcome])).toEqual([
      ['tool.start', undefined],
      ['tool.done', 'input-required'],
      ['tool.start', undefined],
      ['tool.done', 'ok'],
    ]);
  });

  it('leaves the server’s own tools out by default (calls.events: upstream), and every tool under off', async () => {
    const k = await kit({ servers: { dict: official } }, { tools: [{ name: 'echo', handler: () => text('hi') }] });
    await k.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream() } });
    await k.call('echo');
    await k.call('lookup', { word: 'x' });
    expect(callEvents(k.logs.records).map((r) => r.tool)).toEqual(['lookup', 'lookup']);
    const quiet = await kit(
      { calls: { events: 'off' }, servers: { dict: official } },
      { tools: [{ name: 'echo', handler: () => text('hi') }] },
    );
    await quiet.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream() } });
    await quiet.call('echo');
    await quiet.call('lookup', { word: 'x' });
    expect(callEvents(quiet.logs.records)).toEqual([]);
  });

  it('writes start and done at calls.level, and crash at warn', async () => {
    const k = await kit(
      { calls: { events: 'all', level: 'debug' } },
      { tools: [{ name: 'echo', handler: () => text('hi') }] },
    );
    await k.call('echo');
    expect(callEvents(k.logs.records).map((r) => r.level)).toEqual([20, 20]);
  });
});

describe('the call fields on the active OpenTelemetry span', () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });

  /** Like a gateway: a span per call, active around the executor, ended when the call settles. */
  const spans = definePlugin({
    name: 'spans',
    version: '1.0.0',
    apply({ hooks }) {
      const open = new WeakMap<object, ReturnType<ReturnType<typeof trace.getTracer>['startSpan']>>();
      hooks.preCall.tap(
        { name: 'spans', stage: Stage.FIRST },
        (ctx) => void open.set(ctx, trace.getTracer('test').startSpan(`call ${ctx.tool.name}`)),
      );
      hooks.execute.tap({ name: 'spans', stage: Stage.LAST }, (next: Executor): Executor => (ctx) => {
        const span = open.get(ctx);
        return span ? context.with(trace.setSpan(context.active(), span), next, undefined, ctx) : next(ctx);
      });
      hooks.settled.tap({ name: 'spans', stage: Stage.LAST }, (ctx) => open.get(ctx)?.end());
    },
  });

  it('tags the span active while the tool runs with the upstream, the composed risk and how the call ended', async () => {
    exporter.reset();
    const k = await createTestKit({
      plugins: [risk({ ledger: { persist: 'memory' }, servers: { dict: official } }), spans],
    });
    open.push(k);
    await k.server.import({ name: 'dict', connection: { type: 'in-process', server: upstream('impostor') } });
    await k.call('lookup', { word: 'sluice' });
    const span = exporter.getFinishedSpans().find((s) => s.name === 'call lookup');
    expect(span?.attributes).toMatchObject({
      'sluice.upstream': 'dict',
      'sluice.upstream.tool': 'lookup',
      'sluice.risk.level': 'L1',
      'sluice.risk.server': 'L1',
      'sluice.risk.tool': 'L1',
      'sluice.risk.hitl': false,
      'sluice.call.outcome': 'ok',
    });
    expect(typeof span?.attributes['sluice.call.duration_ms']).toBe('number');
  });

  it('tags nothing and costs a lookup when no span is active', async () => {
    exporter.reset();
    const k = await kit(ALL, { tools: [{ name: 'echo', handler: () => text('hi') }] });
    await k.call('echo');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
