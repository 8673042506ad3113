/** Metadata, key sets and introspection answers are small; anything larger is refused. */
const MAX_JSON_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

/** Reads a response's body up to `MAX_JSON_BYTES`; past it, stops reading and throws. */
async function boundedBody(url: string, response: Response): Promise<Buffer> {
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = response.body?.getReader();
  if (!reader) throw new Error(`${url} sent no body`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JSON_BYTES) {
      await reader.cancel();
      throw new Error(`${url} answered more than ${MAX_JSON_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Fetches JSON from an authorization server, bounded in time and size. */
export async function fetchJsonBounded(url: string, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
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
