import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/server';
import { SpanKind, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createServer, definePlugin } from '@sluice/core';
import { TRACER_NAME, tracingRegistered, withTraceSpan } from '../src/index.js';
import type { Plugin } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { call, connectClient } from '../../core/test/fixtures/upstream-helpers.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;

/** An upstream whose tool answers with the _meta it received. */
function echoingUpstream(): McpServer {
  const server = new McpServer({ name: 'echo-meta', version: '1' });
  server.registerTool('meta', { description: 'Returns its _meta' }, async (ctx) => ({
    content: [{ type: 'text', text: JSON.stringify(ctx.mcpReq._meta ?? {}) }],
  }));
  return server;
}

async function gatewayCall(plugins: Plugin[], meta: Record<string, unknown>): Promise<Record<string, unknown>> {
  const server = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger, plugins });
  await server.import({ name: 'up', connection: { type: 'in-process', server: echoingUpstream() } });
  const { client } = await connectClient(server);
  const seen = JSON.parse(textOf(await call(client, 'meta', {}, meta))) as Record<string, unknown>;
  await client.close();
  await server.close();
  return seen;
}

describe('without an OpenTelemetry SDK', () => {
  it('forwards the caller traceparent upstream untouched', async () => {
    expect((await gatewayCall([], { traceparent: TRACEPARENT })).traceparent).toBe(TRACEPARENT);
    expect(await gatewayCall([], {})).not.toHaveProperty('traceparent');
  });

  it('says no tracer is registered, so calls skip span work', () => {
    expect(tracingRegistered()).toBe(false);
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

  it('says a tracer is registered', () => {
    expect(tracingRegistered()).toBe(true);
  });

  it('records the upstream hop as a client span continuing the caller traceparent, and sends the hop upstream', async () => {
    exporter.reset();
    const seen = await gatewayCall([], { traceparent: TRACEPARENT });
    const [hop] = exporter.getFinishedSpans();
    expect(hop).toMatchObject({
      name: 'tools/call meta',
      kind: SpanKind.CLIENT,
      instrumentationScope: { name: TRACER_NAME },
    });
    expect(hop?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'meta',
      'sluice.upstream': 'up',
    });
    expect(hop?.spanContext().traceId).toBe(TRACE_ID);
    expect(hop?.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
    expect(seen.traceparent).toBe(`00-${TRACE_ID}-${hop?.spanContext().spanId}-01`);
  });

  it('nests the hop under a span a plugin opens around the call: one trace from client to upstream', async () => {
    exporter.reset();
    const callSpan = definePlugin({
      name: 'call-span',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.execute.tap(
          'call-span',
          (next, tool) => (ctx) =>
            withTraceSpan(`sluice ${tool.name}`, { meta: ctx.meta, kind: SpanKind.SERVER }, () => next(ctx)),
        ),
    });
    const seen = await gatewayCall([callSpan], { traceparent: TRACEPARENT });
    const spans = exporter.getFinishedSpans();
    const outer = spans.find((s) => s.name === 'sluice meta');
    const hop = spans.find((s) => s.name === 'tools/call meta');
    expect(spans.map((s) => s.spanContext().traceId)).toEqual([TRACE_ID, TRACE_ID]);
    expect(outer?.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
    expect(hop?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
    expect(seen.traceparent).toBe(`00-${TRACE_ID}-${hop?.spanContext().spanId}-01`);
  });

  it('starts a new trace when the caller sends none, and ignores a malformed traceparent', async () => {
    exporter.reset();
    const seen = await gatewayCall([], { traceparent: '00-not-a-trace-01' });
    const [hop] = exporter.getFinishedSpans();
    expect(hop?.parentSpanContext).toBeUndefined();
    expect(seen.traceparent).toBe(`00-${hop?.spanContext().traceId}-${hop?.spanContext().spanId}-01`);
  });
});
