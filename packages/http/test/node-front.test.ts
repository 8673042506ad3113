import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import type { FrontRoute } from '../src/node-front.js';
import { nodeFront } from '../src/node-front.js';
import '@sluice/http';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Serves a route; `listeners` reads how many `close` listeners each response kept once the front was done with it. */
async function serve(
  route: FrontRoute,
  maxBodyBytes = 1_000,
): Promise<{ url: string; errors: Error[]; leftListeners: number[] }> {
  const errors: Error[] = [];
  const leftListeners: number[] = [];
  const handler = nodeFront(route, { maxBodyBytes, onerror: (error) => errors.push(error) });
  const server = http.createServer((req, res) => {
    const before = res.listenerCount('close') + res.listenerCount('drain');
    void handler(req, res).then(() =>
      leftListeners.push(res.listenerCount('close') + res.listenerCount('drain') - before),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp?x=1`, errors, leftListeners };
}

describe('the node:http front', () => {
  it('hands the route the method, a bodiless Request with the URL and headers, and the body through readBody', async () => {
    let seen: { method: string; url: string; header: string | null; hasBody: boolean; text: string } | undefined;
    const { url } = await serve(async (front) => {
      const read = await front.readBody();
      const request = front.web();
      seen = {
        method: front.method,
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
    const { url } = await serve(async (front) => Response.json(await front.readBody()), 10);
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

  it('gives a request a signal only when asked, and that signal does not abort when the answer was written', async () => {
    const signals: AbortSignal[] = [];
    let plain: Request | undefined;
    const { url, leftListeners } = await serve((front) => {
      plain = front.web();
      signals.push(front.web({ signal: true }).signal);
      return Promise.resolve(new Response('done'));
    });
    expect(await (await fetch(url)).text()).toBe('done');
    await expect.poll(() => leftListeners.length).toBe(1);
    expect(plain?.signal.aborted).toBe(false);
    expect(signals.map((s) => s.aborted)).toEqual([false]);
  });

  it('streams an event-stream answer, and when the client goes away aborts the signal and cancels the stream', async () => {
    let signal: AbortSignal | undefined;
    let cancelled = false;
    const { url, leftListeners } = await serve((front) => {
      signal = front.web({ signal: true }).signal;
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
    await expect.poll(() => leftListeners).toEqual([0]);
  });

  it('keeps at most a bounded backlog of notifications for a client that does not read its event stream', async () => {
    // What a hostile upstream (or a busy one) sends a session whose client stopped reading: log lines, progress,
    // list changes and resource updates. They may be dropped or folded; answers and requests may not.
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const { url } = await serve(() =>
      Promise.resolve(
        new Response(new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) }), {
          headers: { 'content-type': 'text/event-stream' },
        }),
      ),
    );
    const encoder = new TextEncoder();
    const send = (message: Record<string, unknown>) =>
      controller?.enqueue(
        encoder.encode(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`),
      );
    const { port } = new URL(url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
    socket.pause(); // the client reads nothing
    await expect.poll(() => controller !== undefined).toBe(true);
    // The front takes every chunk off the stream as it comes (a stream it stopped reading is one more queue).
    const taken = () => expect.poll(() => controller?.desiredSize, { timeout: 20_000 }).toBe(1);

    const line = 'x'.repeat(1_000);
    const logs = 40_000;
    for (let i = 0; i < logs; i++)
      send({ method: 'notifications/message', params: { level: 'info', data: `${i} ${line}` } });
    await taken();
    for (let i = 0; i < 500; i++) {
      send({ method: 'notifications/resources/updated', params: { uri: 'res://a' } });
      send({ method: 'notifications/resources/updated', params: { uri: 'res://b' } });
      send({ method: 'notifications/tools/list_changed' });
      send({ method: 'notifications/progress', params: { progressToken: 1, progress: i } });
    }
    send({ id: 7, method: 'elicitation/create', params: { message: 'must arrive' } });
    send({ id: 3, result: { content: [] } });
    await taken();
    controller?.close();

    socket.resume();
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await expect.poll(() => Buffer.concat(chunks).toString().endsWith('0\r\n\r\n'), { timeout: 20_000 }).toBe(true);
    socket.destroy();
    const events = [
      ...Buffer.concat(chunks)
        .toString()
        .matchAll(/^data: (.*)$/gm),
    ].map(
      (m) => JSON.parse(m[1] as string) as { id?: number; method?: string; params?: { uri?: string; data?: string } },
    );
    const heard = (method: string) => events.filter((e) => e.method === method);
    // Nothing that must arrive was lost.
    expect(events.filter((e) => e.id !== undefined).map((e) => e.id)).toEqual([7, 3]);
    // Folded: one of each kind and item, sent once the client reads again.
    expect(heard('notifications/resources/updated').map((e) => e.params?.uri)).toEqual(['res://a', 'res://b']);
    expect(heard('notifications/tools/list_changed')).toHaveLength(1);
    expect(heard('notifications/progress')).toHaveLength(0);
    // Log lines past the backlog were dropped: far fewer than the 40 MB sent reached the client.
    const delivered = heard('notifications/message');
    expect(delivered.length).toBeGreaterThan(0);
    expect(delivered.length).toBeLessThan(logs / 2);
    // Those that did arrive came in order, from the first.
    expect(delivered.map((e) => Number(e.params?.data?.split(' ')[0]))).toEqual(delivered.map((_, i) => i));
  }, 60_000);

  it('leaves no listener on a response it has finished, whether it had a body, a stream or none', async () => {
    const { url, leftListeners } = await serve(async (front) => {
      const read = await front.readBody();
      const kind = read.tooLarge ? '' : read.text;
      if (kind === 'none') return new Response(null, { status: 202 });
      if (kind === 'stream')
        return new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('data: one\n\n'));
              controller.close();
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        );
      return Response.json({ kind });
    });
    for (const body of ['none', 'stream', 'json']) await (await fetch(url, { method: 'POST', body })).text();
    await expect.poll(() => leftListeners.length).toBe(3);
    expect(leftListeners).toEqual([0, 0, 0]);
  });
});

/** A full collection, now: V8's own, which vitest's workers are not started with. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** A 2025-11-25 session over node:http keep-alive sockets: a lean client, so the server is what the heap shows. */
async function sessionClient(url: URL) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const post = (body: string, headers: Record<string, string> = {}) =>
    new Promise<{ headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const request = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ headers: response.headers, text }));
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const opened = await post(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    }),
  );
  const headers = { 'mcp-session-id': String(opened.headers['mcp-session-id']), 'mcp-protocol-version': '2025-11-25' };
  await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  let id = 1;
  return {
    /** `calls` echo calls, eight in flight; each answer is checked. */
    async run(calls: number) {
      let left = calls;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (left-- > 0) {
            const answer = await post(
              `{"jsonrpc":"2.0","id":${id++},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
              headers,
            );
            if (!answer.text.includes('"text":"hi"')) throw new Error(`not an echo: ${answer.text.slice(0, 200)}`);
          }
        }),
      );
    },
    close: () => agent.destroy(),
  };
}

describe('the HTTP listener over many session calls', () => {
  it('holds no more memory after twice the calls, measured straight after a full collection', async () => {
    const gc = collector();
    const server = createServer({ name: 'soak', version: '1', logger: captureLogger().logger });
    server.tool({
      name: 'echo',
      handler: (args: { text?: string }) => ({ content: [{ type: 'text', text: args.text ?? '' }] }),
    });
    const listener = await server.listen();
    const client = await sessionClient(listener.url);
    const heap = () => {
      // Twice, with no turn of the event loop between: what a finalizer still has to release is still counted.
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const CALLS = 1_500;
    await client.run(CALLS); // warm: code compiled, caches filled
    const warm = heap();
    await client.run(CALLS);
    const once = heap();
    await client.run(2 * CALLS);
    const twice = heap();
    client.close();
    await server.close();
    // A call that left 1 KiB behind would add 3 MiB over the second run; noise stays well under 1 MiB.
    const perCall = (twice - once) / (2 * CALLS);
    expect({ warmKiB: Math.round(warm / 1024), perCallBytes: Math.round(perCall) }).toMatchObject({
      perCallBytes: expect.toSatisfy((n: number) => n < 300) as unknown,
    });
  }, 120_000);
});
