import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FrontRoute } from '../src/node-front.js';
import { nodeFront } from '../src/node-front.js';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(route: FrontRoute, maxBodyBytes = 1_000): Promise<{ url: string; errors: Error[] }> {
  const errors: Error[] = [];
  const handler = nodeFront(route, { maxBodyBytes, onerror: (error) => errors.push(error) });
  const server = http.createServer((req, res) => void handler(req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp?x=1`, errors };
}

describe('the node:http front', () => {
  it('hands the route a bodiless Request with the method, URL and headers, and the body through readBody', async () => {
    let seen: { method: string; url: string; header: string | null; hasBody: boolean; text: string } | undefined;
    const { url } = await serve(async (request, readBody) => {
      const read = await readBody();
      seen = {
        method: request.method,
        url: request.url,
        header: request.headers.get('x-probe'),
        hasBody: request.body !== null,
        text: read.tooLarge ? '' : read.text,
      };
      return Response.json({ ok: true }, { headers: { 'x-answer': 'yes' } });
    });
    const response = await fetch(url, { method: 'POST', headers: { 'x-probe': 'p' }, body: '{"é":1}' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-answer')).toBe('yes');
    expect(await response.json()).toEqual({ ok: true });
    expect(seen).toEqual({
      method: 'POST',
      url: expect.stringMatching(/\/mcp\?x=1$/) as unknown,
      header: 'p',
      hasBody: false,
      text: '{"é":1}',
    });
  });

  it('says a body is too large past the limit, without keeping it', async () => {
    const { url } = await serve(async (_request, readBody) => Response.json(await readBody()), 10);
    const response = await fetch(url, { method: 'POST', body: 'x'.repeat(50) });
    expect(await response.json()).toEqual({ tooLarge: true });
  });

  it('answers 500 with a JSON-RPC error when the route throws, and reports the error', async () => {
    const { url, errors } = await serve(() => Promise.reject(new Error('boom')));
    const response = await fetch(url, { method: 'POST', body: '{}' });
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32603);
    expect(errors.map((e) => e.message)).toEqual(['boom']);
  });

  it('streams an event-stream answer, and when the client goes away aborts the request and cancels the stream', async () => {
    let signal: AbortSignal | undefined;
    let cancelled = false;
    const { url } = await serve((request) => {
      signal = request.signal;
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('data: first\n\n'));
        },
        cancel() {
          cancelled = true;
        },
      });
      return Promise.resolve(new Response(stream, { headers: { 'content-type': 'text/event-stream' } }));
    });
    const controller = new AbortController();
    const response = await fetch(url, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = (await reader.read()) as { value?: Uint8Array };
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    controller.abort();
    await expect.poll(() => signal?.aborted).toBe(true);
    await expect.poll(() => cancelled).toBe(true);
  });
});
