import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  createTraceState,
  isSpanContextValid,
  propagation,
  trace,
} from '@opentelemetry/api';
import type {
  Attributes,
  Context,
  Span,
  TextMapGetter,
  TextMapPropagator,
  TextMapSetter,
  TracerProvider,
} from '@opentelemetry/api';
import type { Meta } from '../meta.js';

/** The tracer name Sluice's spans carry. */
export const TRACER_NAME = '@sluice/core';

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';
// version-traceid-spanid-flags; version ff is forbidden, and version 00 has nothing after the flags.
const TRACEPARENT_FORMAT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const MAX_TRACESTATE_LENGTH = 512;

/** Reads `_meta` values as strings only: every inbound value is attacker-controlled. */
const metaGetter: TextMapGetter<Readonly<Meta>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

const metaSetter: TextMapSetter<Meta> = {
  set: (carrier, key, value) => {
    if (key !== '__proto__') carrier[key] = value;
  },
};

/**
 * W3C trace context, used when the application registered no propagator
 * (the API's default propagates nothing), so that a `traceparent` still
 * crosses the hop.
 */
class W3CTraceContext implements TextMapPropagator {
  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    const span = trace.getSpanContext(ctx);
    if (span === undefined || !isSpanContextValid(span)) return;
    const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
    setter.set(carrier, TRACEPARENT, `00-${span.traceId}-${span.spanId}-${flags}`);
    const state = span.traceState?.serialize();
    if (state) setter.set(carrier, TRACESTATE, state);
  }

  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    const raw = getter.get(carrier, TRACEPARENT);
    const header = Array.isArray(raw) ? raw[0] : raw;
    const match = typeof header === 'string' ? TRACEPARENT_FORMAT.exec(header.trim()) : null;
    if (match === null) return ctx;
    const [, version, traceId, spanId, flags, rest] = match as unknown as [
      string,
      string,
      string,
      string,
      string,
      string | undefined,
    ];
    if (version === 'ff' || (version === '00' && rest !== undefined)) return ctx;
    const state = getter.get(carrier, TRACESTATE);
    const rawState = Array.isArray(state) ? state.join(',') : state;
    const spanContext = {
      traceId,
      spanId,
      traceFlags: Number.parseInt(flags, 16),
      isRemote: true,
      ...(typeof rawState === 'string' && rawState.length <= MAX_TRACESTATE_LENGTH
        ? // eslint-disable-next-line @typescript-eslint/no-deprecated -- the API's only TraceState builder; its replacement lives in @opentelemetry/core, which Sluice does not depend on
          { traceState: createTraceState(rawState) }
        : {}),
    };
    return isSpanContextValid(spanContext) ? trace.setSpanContext(ctx, spanContext) : ctx;
  }

  fields(): string[] {
    return [TRACEPARENT, TRACESTATE];
  }
}

const fallback = new W3CTraceContext();

// The application's propagator when it registered one that speaks W3C trace context; ours otherwise.
function propagator(): Pick<TextMapPropagator, 'inject' | 'extract'> {
  return propagation.fields().includes(TRACEPARENT) ? propagation : fallback;
}

// The provider the global one delegates to, and whether it is a real one, decided once per provider.
let lastDelegate: TracerProvider | undefined;
let lastRegistered = false;

/** Whether an OpenTelemetry SDK registered a tracer provider; without one, no span ever records. */
export function tracingRegistered(): boolean {
  const global = trace.getTracerProvider() as TracerProvider & { getDelegate?: () => TracerProvider };
  const delegate = global.getDelegate?.() ?? global;
  if (delegate !== lastDelegate) {
    lastDelegate = delegate;
    // The API's stand-in while nothing is registered; it exports no way to recognise it but its class.
    lastRegistered = delegate.constructor.name !== 'NoopTracerProvider';
  }
  return lastRegistered;
}

/**
 * Nothing to trace for a call with this `_meta`: no SDK records spans, no
 * `traceparent` came in to pass on, and no span is active. Such a call can
 * skip span objects and context work altogether.
 */
export function traceIdle(meta: Readonly<Meta>): boolean {
  return typeof meta[TRACEPARENT] !== 'string' && !tracingRegistered() && trace.getSpan(context.active()) === undefined;
}

/** The trace context a `_meta` carries (its `traceparent`), on top of `base`. */
export function extractTraceContext(meta: Readonly<Meta>, base: Context = ROOT_CONTEXT): Context {
  return propagator().extract(base, meta, metaGetter);
}

/** Writes the span of `ctx` into a `_meta` carrier as `traceparent` (and `tracestate`). */
export function injectTraceContext(carrier: Meta, ctx: Context = context.active()): void {
  propagator().inject(ctx, carrier, metaSetter);
}

export interface TraceSpanOptions {
  /** Incoming `_meta`: its `traceparent` is the parent when no span is active. */
  readonly meta?: Readonly<Meta>;
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
}

/**
 * Runs `fn` in a new span: a child of the active span (say, the span of the
 * Sluice call around it), or else of the `traceparent` in `options.meta`.
 * `fn` gets the span and a context holding it, to inject downstream. The
 * span ends when `fn` settles; a throw marks it as an error. Without an
 * OpenTelemetry SDK registered this costs next to nothing and records nothing.
 */
export function withTraceSpan<T>(
  name: string,
  options: TraceSpanOptions,
  fn: (span: Span, spanContext: Context) => Promise<T>,
): Promise<T> {
  const active = context.active();
  const parent =
    trace.getSpan(active) === undefined && options.meta ? extractTraceContext(options.meta, active) : active;
  const span = trace
    .getTracer(TRACER_NAME)
    .startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent);
  // No SDK and no trace to continue: nothing to record or propagate, so skip making a context.
  const traced = span.isRecording() || isSpanContextValid(span.spanContext());
  const spanContext = traced ? trace.setSpan(parent, span) : parent;
  const running = traced ? context.with(spanContext, () => fn(span, spanContext)) : fn(span, spanContext);
  return running.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
      span.end();
      throw error;
    },
  );
}
