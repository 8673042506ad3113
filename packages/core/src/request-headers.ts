import type { Headers } from './context.js';

/** Where a request's headers may sit: v2's `ctx.http.req` (a fetch Request) or v1's `extra.requestInfo`. */
export interface HeaderSource {
  readonly http?: {
    readonly req?: { readonly headers: { forEach(each: (value: string, key: string) => void): void } };
  };
  readonly requestInfo?: { readonly headers?: Readonly<Record<string, string | string[] | undefined>> };
}

/** The request's headers as a plain record with lower-case names; undefined when the request came without any. */
export function headersOf(source: HeaderSource): Headers | undefined {
  const req = source.http?.req;
  if (req) {
    const out: Record<string, string> = {};
    req.headers.forEach((value, key) => {
      out[key] = value;
    });
    return out;
  }
  const raw = source.requestInfo?.headers;
  if (!raw) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw))
    if (value !== undefined) out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}
