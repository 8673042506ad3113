import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Client } from '@modelcontextprotocol/client';
import { TRACER_NAME } from '@sluice/upstream';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { GATEWAY_TRACER_NAME, createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { call, fixtureUpstream, httpClient } from './helpers.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;

let gateway: Gateway;
let client: Client;
let url: URL;

beforeAll(async () => {
  gateway = createGateway(
    { listen: { http: { port: 0 } }, upstreams: [fixtureUpstream('up')], plugins: { chaining: {} } },
    { logger: captureLogger().logger },
  );
  const listeners = await gateway.start();
  url = listeners.http!.url;
  client = await httpClient(url);
});

afterAll(async () => {
  await client.close();
  await gateway.close();
});

const byName = (spans: readonly ReadableSpan[], name: string): ReadableSpan => {
  const span = spans.find((s) => s.name === name);
  if (!span) throw new Error(`no span named "${name}" among ${spans.map((s) => s.name).join(', ')}`);
  return span;
};

describe('without an OpenTelemetry SDK', () => {
  it('records nothing, and the caller traceparent still reaches the upstream untouched', async () => {
    const seen = JSON.parse(textOf(await call(client, 'up_meta', {}, { traceparent: TRACEPARENT }))) as Record<
      string,
      unknown
    >;
    expect(seen.traceparent).toBe(TRACEPARENT);
  });
});

describe('with an OpenTelemetry SDK registered', () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });

  it('makes one trace of the client traceparent, the Sluice call span and the upstream hop span', async () => {
    exporter.reset();
    const seen = JSON.parse(textOf(await call(client, 'up_meta', {}, { traceparent: TRACEPARENT }))) as Record<
      string,
      unknown
    >;
    const spans = exporter.getFinishedSpans();
    const callSpan = byName(spans, 'tools/call up_meta');
    const hop = byName(spans, 'tools/call meta');
    expect(spans.map((s) => s.spanContext().traceId)).toEqual([TRACE_ID, TRACE_ID]);
    expect(callSpan).toMatchObject({ kind: SpanKind.SERVER, instrumentationScope: { name: GATEWAY_TRACER_NAME } });
    expect(callSpan.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'up_meta',
      'sluice.upstream': 'up',
      'sluice.outcome': 'ok',
    });
    expect(callSpan.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
    expect(hop).toMatchObject({ kind: SpanKind.CLIENT, instrumentationScope: { name: TRACER_NAME } });
    expect(hop.parentSpanContext?.spanId).toBe(callSpan.spanContext().spanId);
    expect(seen.traceparent).toBe(`00-${TRACE_ID}-${hop.spanContext().spanId}-01`);
  });

  it('names the verified caller on the call span, never its key', async () => {
    const key = 'tracing-key-0123456789';
    const guarded = createGateway(
      {
        listen: { http: { port: 0, auth: { type: 'apiKeys', keys: [{ name: 'ci-bot', key }] } } },
        upstreams: [fixtureUpstream('up')],
      },
      { logger: captureLogger().logger },
    );
    const listeners = await guarded.start();
    const caller = await httpClient(listeners.http!.url, { authorization: `Bearer ${key}` });
    try {
      exporter.reset();
      await call(caller, 'up_echo', { text: 'hi' });
      const callSpan = byName(exporter.getFinishedSpans(), 'tools/call up_echo');
      expect(callSpan.attributes).toMatchObject({
        'enduser.id': 'ci-bot',
        'sluice.auth.method': 'apiKey',
        'sluice.auth.client_id': 'ci-bot',
      });
      expect(JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes))).not.toContain(key);
    } finally {
      await caller.close();
      await guarded.close();
    }
  });

  it('starts a trace of its own when the caller sends no traceparent', async () => {
    exporter.reset();
    await call(client, 'up_echo', { text: 'hi' });
    const spans = exporter.getFinishedSpans();
    const callSpan = byName(spans, 'tools/call up_echo');
    expect(callSpan.parentSpanContext).toBeUndefined();
    expect(byName(spans, 'tools/call echo').parentSpanContext?.spanId).toBe(callSpan.spanContext().spanId);
  });

  it('records a refused call as one error span naming the refusal code, with no upstream hop', async () => {
    exporter.reset();
    const filtered = await httpClient(url, { 'x-sluice-exclude-tools': 'up_echo' });
    const result = await call(filtered, 'up_echo', { text: 'hi' }, { traceparent: TRACEPARENT });
    await filtered.close();
    expect(errorOf(result)?.code).toBe('TOOL_NOT_AVAILABLE');
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(['tools/call up_echo']);
    expect(spans[0]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(spans[0]?.attributes).toMatchObject({ 'error.type': 'TOOL_NOT_AVAILABLE', 'sluice.outcome': 'refused' });
    expect(spans[0]?.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
  });

  it('survives any traceparent and tracestate a caller sends: the call runs, and its span continues only a well-formed parent', async () => {
    const traceparent = fc.oneof(
      fc.string(),
      fc.constant(TRACEPARENT),
      fc.stringMatching(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/),
    );
    await fc.assert(
      fc.asyncProperty(
        traceparent,
        fc.oneof(fc.string(), fc.integer(), fc.constant(undefined)),
        async (parent, state) => {
          exporter.reset();
          const result = await gateway.server.call(
            'up_echo',
            { text: 'fuzz' },
            { meta: { traceparent: parent, tracestate: state } },
          );
          expect(textOf(result)).toBe('fuzz');
          // A well-formed parent that is not sampled is respected: nothing is recorded.
          const spans = exporter.getFinishedSpans().filter((span) => span.name === 'tools/call up_echo');
          expect(spans.length).toBeLessThanOrEqual(1);
          const continued = spans[0]?.parentSpanContext?.spanId;
          if (continued !== undefined) expect(parent.includes(continued)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('nests a chained step under the call whose result asked for it', async () => {
    exporter.reset();
    const result = await call(client, 'up_handoff', { text: 'next' }, { traceparent: TRACEPARENT });
    expect(textOf(result)).toBe('next');
    const spans = exporter.getFinishedSpans();
    const first = byName(spans, 'tools/call up_handoff');
    const step = byName(spans, 'tools/call up_echo');
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([TRACE_ID]));
    expect(step.kind).toBe(SpanKind.INTERNAL);
    expect(step.parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(byName(spans, 'tools/call handoff').parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(byName(spans, 'tools/call echo').parentSpanContext?.spanId).toBe(step.spanContext().spanId);
  });
});
