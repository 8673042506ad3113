import { invalidParams } from './errors.js';

/** The `_meta` keys Sluice reads and writes. */
export const MetaKey = Object.freeze({
  CALL_STACK: 'dev.sluice/callStack',
  ORIGIN: 'dev.sluice/origin',
  NEXT_TOOL: 'dev.sluice/nextTool',
  ERROR: 'dev.sluice/error',
  RISK: 'dev.sluice/risk',
  EGRESS: 'dev.sluice/egress',
  CHAIN: 'dev.sluice/chain',
  TRACEPARENT: 'traceparent',
  TRACESTATE: 'tracestate',
  BAGGAGE: 'baggage',
} as const);

/** More keys than any honest client sends; a bound on what one request can make us copy. */
export const MAX_META_KEYS = 128;

/** W3C trace context, forwarded upstream untouched. */
const FORWARDED = [MetaKey.TRACEPARENT, MetaKey.TRACESTATE, MetaKey.BAGGAGE] as const;

export type Meta = Record<string, unknown>;

/** An empty object with no prototype: `__proto__` is then only a key. */
export function emptyMeta(): Meta {
  return Object.create(null) as Meta;
}

/** The `_meta` of a call that came without one: shared, so frozen. */
const NO_META: Readonly<Meta> = Object.freeze(emptyMeta());

/**
 * Copies an incoming `_meta` into a prototype-free object. Every value is
 * attacker-controlled: a `_meta` that is not a plain object, or has too many
 * keys, is a -32602; `__proto__` is dropped.
 */
export function readIncomingMeta(raw: unknown): Readonly<Meta> {
  if (raw === undefined || raw === null) return NO_META;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidParams('_meta must be an object');
  const meta = emptyMeta();
  const keys = Object.keys(raw);
  if (keys.length > MAX_META_KEYS)
    throw invalidParams(`_meta has ${keys.length} keys; at most ${MAX_META_KEYS} are accepted`);
  for (const key of keys) {
    if (key === '__proto__') continue;
    meta[key] = (raw as Meta)[key];
  }
  return meta;
}

/** The outgoing `_meta` a call starts with: the incoming trace context, nothing else. */
export function initialOutgoingMeta(incoming: Readonly<Meta>): Meta {
  const out = emptyMeta();
  if (incoming === NO_META) return out;
  for (const key of FORWARDED) {
    const value = incoming[key];
    if (typeof value === 'string') out[key] = value;
  }
  return out;
}

/**
 * A plain-object copy of a prototype-free `_meta`, for handing to the SDK.
 * Keys are assigned, which keeps the object in V8's fast mode (it is
 * serialized on every proxied call); only a `__proto__` key is defined, so
 * that it stays a key and never becomes the prototype. `base`, when given,
 * is copied first and its keys are overridden by `meta`'s.
 */
export function toPlainMeta(meta: Readonly<Meta>, base?: Readonly<Meta>): Meta | undefined {
  let out: Meta | undefined;
  if (base !== undefined) for (const key of Object.keys(base)) out = put(out ?? {}, key, base[key]);
  for (const key in meta) out = put(out ?? {}, key, meta[key]);
  return out;
}

function put(out: Meta, key: string, value: unknown): Meta {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
  return out;
}
