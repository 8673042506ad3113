import type * as OtelApi from '@opentelemetry/api';
import type {
  Attributes,
  Context,
  Span,
  SpanKind,
  TextMapGetter,
  TextMapPropagator,
  TextMapSetter,
  TracerProvider,
} from '@opentelemetry/api';
import type { Meta } from '@sluice/core';
import { requireCjs } from '@sluice/core/internal';

// The OpenTelemetry API loads on the first span or propagation, not at import: adopting a
// guard into a server that never traces does not load it. Its state is global (registered
// providers live on globalThis), so this copy sees what the application registered.
let api: typeof OtelApi | undefined;
const otel = (): typeof OtelApi => (api ??= requireCjs('@opentelemetry/api') as typeof OtelApi);

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
    const span = otel().trace.getSpanContext(ctx);
    if (span === undefined || !otel().isSpanContextValid(span)) return;
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
          { traceState: otel().createTraceState(rawState) }
        : {}),
    };
    return otel().isSpanContextValid(spanContext) ? otel().trace.setSpanContext(ctx, spanContext) : ctx;
  }

  fields(): string[] {
    return [TRACEPARENT, TRACESTATE];
  }
}

const fallback = new W3CTraceContext();

// The application's propagator when it registered one that speaks W3C trace context; ours otherwise.
function propagator(): Pick<TextMapPropagator, 'inject' | 'extract'> {
  const { propagation } = otel();
  return propagation.fields().includes(TRACEPARENT) ? propagation : fallback;
}

// The provider the global one delegates to, and whether it is a real one, decided once per provider.
let lastDelegate: TracerProvider | undefined;
let lastRegistered = false;

// Where the OpenTelemetry API keeps its registrations (providers, propagator, context manager): a global
// any copy of the API shares. Absent, nothing was ever registered and the API need not be loaded to know it.
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');

/** Whether an OpenTelemetry SDK registered a tracer provider; without one, no span ever records. */
export function tracingRegistered(): boolean {
  if ((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL] === undefined) return false;
  const global = otel().trace.getTracerProvider() as TracerProvider & { getDelegate?: () => TracerProvider };
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
 * skip span objects and context work altogether, and never loads the API.
 */
export function traceIdle(meta: Readonly<Meta>): boolean {
  if (typeof meta[TRACEPARENT] === 'string') return false;
  if ((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL] === undefined) return true;
  return !tracingRegistered() && otel().trace.getSpan(otel().context.active()) === undefined;
}

/** The trace context a `_meta` carries (its `traceparent`), on top of `base`. */
export function extractTraceContext(meta: Readonly<Meta>, base?: Context): Context {
  return propagator().extract(base ?? otel().ROOT_CONTEXT, meta, metaGetter);
}

/** Writes the span of `ctx` into a `_meta` carrier as `traceparent` (and `tracestate`). */
export function injectTraceContext(carrier: Meta, ctx: Context = otel().context.active()): void {
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
  const active = otel().context.active();
  const parent =
    otel().trace.getSpan(active) === undefined && options.meta ? extractTraceContext(options.meta, active) : active;
  const span = otel()
    .trace.getTracer(TRACER_NAME)
    .startSpan(name, { kind: options.kind ?? otel().SpanKind.INTERNAL, attributes: options.attributes }, parent);
  // No SDK and no trace to continue: nothing to record or propagate, so skip making a context.
  const traced = span.isRecording() || otel().isSpanContextValid(span.spanContext());
  const spanContext = traced ? otel().trace.setSpan(parent, span) : parent;
  const running = traced ? otel().context.with(spanContext, () => fn(span, spanContext)) : fn(span, spanContext);
  return running.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      span.setStatus({ code: otel().SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
      span.end();
      throw error;
    },
  );
}
