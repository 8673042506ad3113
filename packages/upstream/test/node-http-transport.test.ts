import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, SdkHttpError } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { ServerContext } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { NodeHttpClientTransport } from '../src/node-http-transport.js';
import { ResponseBudget } from '../src/response-limit.js';

interface Upstream {
  readonly url: URL;
  readonly server: McpServer;
  /** The headers of every request the upstream received, in order. */
  readonly seen: { method: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A real SDK server on one stateful Streamable HTTP session, answering with JSON or with event streams. */
async function upstream(json: boolean): Promise<Upstream> {
  const server = new McpServer({ name: 'upstream', version: '1' });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('big', { inputSchema: z.object({ bytes: z.number() }) }, ({ bytes }) => ({
    content: [{ type: 'text', text: 'x'.repeat(bytes) }],
  }));
  server.registerTool('hang', {}, () => new Promise(() => {}));
  // Asks its client for roots during the call, related to it: the request travels on the call's answer stream.
  server.registerTool('roots', {}, async (ctx) => {
    const { roots } = await ctx.mcpReq.send({ method: 'roots/list' });
    return { content: [{ type: 'text', text: `${roots.length} roots` }] };
  });
  server.registerTool('steps', {}, async (ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (token !== undefined)
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress, total: 100 },
        });
    }
    return { content: [{ type: 'text', text: 'done' }] };
  });
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: json,
  });
  await server.connect(transport);
  const node = toNodeHandler({ fetch: (request: Request) => transport.handleRequest(request) });
  const seen: Upstream['seen'] = [];
  const listener = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', headers: req.headers });
    void node(req, res);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const { port } = listener.address() as AddressInfo;
  const close = async () => {
    listener.closeAllConnections();
    await new Promise((resolve) => listener.close(resolve));
    await server.close();
  };
  closers.push(close);
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), server, seen, close };
}

async function connect(url: URL, maxMessageBytes = 1024 * 1024, headers?: Record<string, string>) {
  const transport = new NodeHttpClientTransport(url, { maxMessageBytes, ...(headers ? { headers } : {}) });
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(transport);
  closers.push(() => client.close());
  return { client, transport };
}

const textOf = (result: { content?: unknown }) => (result.content as { text: string }[])[0]?.text;

describe('the node:http client transport', () => {
  for (const json of [true, false]) {
    const answers = json ? 'JSON' : 'event streams';
    it(`speaks Streamable HTTP to an SDK server answering with ${answers}: session, version and configured headers`, async () => {
      const up = await upstream(json);
      const { client, transport } = await connect(up.url, undefined, { Authorization: 'Bearer t0ken' });
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'big', 'hang', 'roots', 'steps']);
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('hi');
      expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const posts = up.seen.filter((r) => r.method === 'POST');
      expect(posts[0]!.headers['mcp-session-id']).toBeUndefined();
      for (const post of posts.slice(1)) {
        expect(post.headers['mcp-session-id']).toBe(transport.sessionId);
        expect(post.headers['mcp-protocol-version']).toBe(transport.protocolVersion);
      }
      for (const request of up.seen) expect(request.headers.authorization).toBe('Bearer t0ken');
    });
  }

  it("delivers the progress an upstream sends on a call's event stream before its result", async () => {
    const up = await upstream(false);
    const { client } = await connect(up.url);
    const seen: number[] = [];
    const result = await client.callTool(
      { name: 'steps', arguments: {} },
      { onprogress: (p) => seen.push(p.progress) },
    );
    expect(textOf(result)).toBe('done');
    expect(seen).toEqual([0, 50, 100]);
  });

  it('opens the standalone event stream after the handshake and delivers what the server sends on it', async () => {
    const up = await upstream(true);
    const { client } = await connect(up.url);
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler('notifications/tools/list_changed', () => resolve()),
    );
    await expect.poll(() => up.seen.some((r) => r.method === 'GET')).toBe(true);
    up.server.sendToolListChanged();
    await changed;
  });

  for (const json of [true, false]) {
    it(`stops reading an answer (${json ? 'JSON' : 'event'}) past maxMessageBytes, and the connection goes on serving`, async () => {
      const up = await upstream(json);
      const { client } = await connect(up.url, 4_096);
      await expect(client.callTool({ name: 'big', arguments: { bytes: 10_000 } })).rejects.toThrow('4096 bytes');
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    });
  }

  it("counts a call's answer against the budget it carries, and ends the call when it runs out", async () => {
    const up = await upstream(false);
    const { client, transport } = await connect(up.url);
    const budget = new ResponseBudget(2_000);
    const headers = transport.carry(budget);
    await expect(client.callTool({ name: 'big', arguments: { bytes: 5_000 } }, { headers })).rejects.toThrow();
    expect(budget.exceeded).toBe(true);
    expect(budget.exceededLimit).toBe(2_000);
    transport.release(headers);
    // The budget header itself never reaches the upstream.
    for (const request of up.seen) expect(request.headers['x-sluice-response-budget']).toBeUndefined();
    const roomy = new ResponseBudget(100_000);
    const more = transport.carry(roomy);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'ok' } }, { headers: more }))).toBe('ok');
    expect(roomy.exceeded).toBe(false);
    expect(roomy.admits({ anything: 'x'.repeat(200_000) })).toBe(true);
  });

  it("names the caller a call carries for the upstream's requests on that call's stream, until they are answered", async () => {
    const up = await upstream(false);
    const transport = new NodeHttpClientTransport(up.url, {});
    const client = new Client({ name: 'test', version: '1' }, { capabilities: { roots: {} } });
    const asked: { id: string | number; caller: unknown }[] = [];
    client.setRequestHandler('roots/list', (_request, ctx) => {
      asked.push({ id: ctx.mcpReq.id, caller: transport.relatedCaller(ctx.mcpReq.id) });
      return { roots: [] };
    });
    await client.connect(transport);
    closers.push(() => client.close());
    // Sluice passes the caller's request context; the transport only keeps it and hands it back.
    const caller = { sessionId: 'the caller' } as unknown as ServerContext;
    const headers = transport.carry(new ResponseBudget(100_000), caller);
    expect(textOf(await client.callTool({ name: 'roots', arguments: {} }, { headers }))).toBe('0 roots');
    transport.release(headers);
    expect(textOf(await client.callTool({ name: 'roots', arguments: {} }))).toBe('0 roots');
    expect(asked.map((a) => a.caller)).toEqual([caller, undefined]);
    // Answered: forgotten.
    expect(transport.relatedCaller(asked[0]!.id)).toBeUndefined();
  });

  it('lets a call whose budget allows more read past the default cap, but holds a cap the connection sets', async () => {
    const eleven = 11 * 1024 * 1024;
    const sized = async (maxMessageBytes: number | undefined) => {
      const up = await upstream(true);
      const transport = new NodeHttpClientTransport(up.url, maxMessageBytes === undefined ? {} : { maxMessageBytes });
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(transport);
      closers.push(() => client.close());
      const headers = transport.carry(new ResponseBudget(32 * 1024 * 1024));
      return client.callTool({ name: 'big', arguments: { bytes: eleven } }, { headers });
    };
    expect(textOf(await sized(undefined))).toHaveLength(eleven);
    await expect(sized(4 * 1024 * 1024)).rejects.toThrow(String(4 * 1024 * 1024));
  });

  it('ends a call its caller cancels without waiting for the upstream', async () => {
    const up = await upstream(false);
    const { client } = await connect(up.url);
    const controller = new AbortController();
    const pending = client.callTool({ name: 'hang', arguments: {} }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('the caller went away')), 50);
    await expect(pending).rejects.toThrow('the caller went away');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');
  });

  it('fails a request the upstream refuses with an HTTP error that carries the status', async () => {
    const up = await upstream(true);
    const { client } = await connect(up.url);
    await up.close();
    const refusing = http.createServer((_req, res) => res.writeHead(404).end('no such session'));
    await new Promise<void>((resolve) => refusing.listen(Number(up.url.port), '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => refusing.close(() => resolve())));
    const error = await client.callTool({ name: 'echo', arguments: { text: 'x' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SdkHttpError);
    expect((error as SdkHttpError).status).toBe(404);
    expect((error as Error).message).toContain('no such session');
  });

  it('closes: onclose fires, and nothing more is sent', async () => {
    const up = await upstream(true);
    const { client, transport } = await connect(up.url);
    let closed = false;
    const previous = transport.onclose;
    transport.onclose = () => {
      closed = true;
      previous?.();
    };
    await transport.close();
    expect(closed).toBe(true);
    const before = up.seen.length;
    await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow();
    expect(up.seen.length).toBe(before);
  });
});
