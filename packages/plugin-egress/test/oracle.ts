// An independent statement of how the guard counts a result, for the tests:
// the result's JSON with every payload string emptied, plus the UTF-8 bytes
// of the payload strings, except a text of 1,024 or more characters that is
// also a top-level string of structuredContent, which counts once (there).
import type { CallToolResult } from '@sluice/core';

type Loose = Record<string, unknown>;

export function oracleSize(result: CallToolResult): number {
  let raw = 0;
  const blank = (value: unknown): unknown => {
    if (typeof value !== 'string') return value;
    raw += Buffer.byteLength(value, 'utf8');
    return '';
  };
  const structured = result.structuredContent;
  const twice = (text: unknown): boolean =>
    typeof text === 'string' &&
    text.length >= 1_024 &&
    typeof structured === 'object' &&
    structured !== null &&
    !Array.isArray(structured) &&
    Object.values(structured).includes(text);
  const content = (result.content as unknown[]).map((block) => {
    const b = block as Loose;
    if (b.type === 'text') return { ...b, text: twice(b.text) ? '' : blank(b.text) };
    if (b.type === 'image' || b.type === 'audio') return { ...b, data: blank(b.data) };
    if (b.type === 'resource') {
      const r = { ...(b.resource as Loose) };
      if ('text' in r) r.text = blank(r.text);
      if ('blob' in r) r.blob = blank(r.blob);
      return { ...b, resource: r };
    }
    return b;
  });
  return Buffer.byteLength(JSON.stringify({ ...result, content }), 'utf8') + raw;
}

/** True when `text` survives a strict UTF-8 round trip: no lone surrogates, nothing replaced. */
export function isValidUtf8Text(text: string): boolean {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(new TextEncoder().encode(text)) === text;
  } catch {
    return false;
  }
}

/** Every payload string of a result's content. */
export function payloadsOf(result: CallToolResult): string[] {
  const out: string[] = [];
  for (const block of result.content as Loose[]) {
    for (const key of ['text', 'data'] as const) if (typeof block[key] === 'string') out.push(block[key]);
    const r = block.resource as Loose | undefined;
    if (r && typeof r.text === 'string') out.push(r.text);
    if (r && typeof r.blob === 'string') out.push(r.blob);
  }
  return out;
}
