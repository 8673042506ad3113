/** Metadata and introspection answers are small; anything larger is refused. */
const MAX_JSON_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

/** Fetches JSON from an authorization server, bounded in time and size. */
export async function fetchJsonBounded(url: string, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  if (!response.body) throw new Error(`${url} sent no body`);
  const body = await readBounded(response, MAX_JSON_BYTES);
  if (body === undefined) throw new Error(`${url} answered more than ${MAX_JSON_BYTES} bytes`);
  return JSON.parse(body.toString('utf8')) as unknown;
}

/** A response's body, or undefined once it passes `maxBytes` (the rest is not read). */
export async function readBounded(response: Response, maxBytes: number): Promise<Buffer | undefined> {
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  if (!reader) return Buffer.alloc(0);
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
