/** Metadata, key sets and introspection answers are small; anything larger is refused. */
const MAX_JSON_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

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

/** Reads a response's body up to `MAX_JSON_BYTES`; past it, stops reading and throws. */
async function boundedBody(url: string, response: Response): Promise<Buffer> {
  if (!response.body) throw new Error(`${url} sent no body`);
  const body = await readBounded(response, MAX_JSON_BYTES);
  if (body === undefined) throw new Error(`${url} answered more than ${MAX_JSON_BYTES} bytes`);
  return body;
}

/** Fetches JSON from an authorization server, bounded in time and size. */
export async function fetchJsonBounded(url: string, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  if (!response.ok) {
    // Not read: an error page is of no use, and may be as large as the server likes.
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`${url} answered ${response.status}`);
  }
  return JSON.parse((await boundedBody(url, response)).toString('utf8')) as unknown;
}

/**
 * `fetch` for the key-set client: the same request, its answer read whole
 * only up to the same bound (a key set is a few KiB; a 300 MB answer is
 * refused as it arrives, not kept).
 */
export async function fetchBounded(url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  const body = await boundedBody(url, response);
  return new Response(new Uint8Array(body), { status: response.status, headers: response.headers });
}
