import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { createServer, definePlugin, refusal } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import '@sluice/http';

const ERAS = [
  { label: '2025-11-25', mode: 'legacy' as const },
  { label: '2026-07-28', mode: { pin: '2026-07-28' } },
];

function guardedServer() {
  const { logger } = captureLogger();
  const server = createServer({
    name: 'http-test',
    version: '1.0.0',
    logger,
    plugins: [
      definePlugin({
        name: 'gate',
        version: '1.0.0',
        apply: ({ hooks }) =>
          hooks.preCall.tap('gate', (ctx) =>
            ctx.arguments.text === 'forbidden' ? refusal({ code: 'GATED', message: 'not this one' }) : undefined,
          ),
      }),
    ],
  });
  server.tool({
    name: 'echo',
    inputSchema: z.object({ text: z.string() }),
    handler: ({ text }, ctx) => ({
      content: [{ type: 'text', text }],
      structuredContent: undefined,
      _meta: { sawMeta: ctx.meta.custom ?? null, transport: ctx.transport },
    }),
  });
  return server;
}

describe('Streamable HTTP on loopback', () => {
  for (const era of ERAS) {
    it(`serves a real client speaking ${era.label}`, async () => {
      const server = guardedServer();
      const listener = await server.listen();
      const client = new Client({ name: 'c', version: '1' }, { versionNegotiation: { mode: era.mode } });
      await client.connect(new StreamableHTTPClientTransport(listener.url));
      expect(client.getNegotiatedProtocolVersion()).toBe(era.label);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);

      const ok = await client.callTool({
        name: 'echo',
        arguments: { text: 'hello' },
        _meta: { custom: 'x' },
      });
      expect(textOf(ok)).toBe('hello');
      expect(ok._meta).toMatchObject({ sawMeta: 'x', transport: 'http' });

      const refused = await client.callTool({ name: 'echo', arguments: { text: 'forbidden' } });
      expect(refused.isError).toBe(true);
      expect(errorOf(refused)?.code).toBe('GATED');

      await expect(client.callTool({ name: 'missing', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      await client.close();
      await server.close();
    });
  }

  it('refuses a browser Origin that is not loopback, and binds to loopback by default', async () => {
    const server = guardedServer();
    const listener = await server.listen();
    expect(listener.host).toBe('127.0.0.1');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const evil = await fetch(listener.url, {
      method: 'POST',
      body,
      headers: { ...headers, origin: 'http://evil.example' },
    });
    expect(evil.status).toBe(403);
    const wrongPath = await fetch(new URL('/elsewhere', listener.url), { method: 'POST', body, headers });
    expect(wrongPath.status).toBe(404);
    await server.close();
  });

  it('answers a body over the size limit with 413 and keeps serving', async () => {
    const server = guardedServer();
    const listener = await server.listen({ maxBodyBytes: 64 * 1024 });
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    const huge = 'x'.repeat(10 * 1024 * 1024);
    await expect(client.callTool({ name: 'echo', arguments: { text: huge } })).rejects.toThrow(/413|too large/i);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    await client.close();
    await server.close();
  });

  it('drains running calls on close, then stops accepting connections', async () => {
    const { logger } = captureLogger();
    const server = createServer({ name: 'drain', version: '1', logger });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    server.tool({
      name: 'slow',
      handler: async () => {
        started();
        await gate;
        return { content: [{ type: 'text', text: 'done' }] };
      },
    });
    const listener = await server.listen();
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    const call = client.callTool({ name: 'slow', arguments: {} });
    // Closing while the call runs: a call that has not reached the server yet is refused, as it should be.
    await running;
    const closing = server.close();
    release();
    expect(textOf(await call)).toBe('done');
    await closing;
    await expect(fetch(listener.url, { method: 'POST' })).rejects.toThrow();
    await client.close().catch(() => {});
  });
});

describe('extra routes', () => {
  it('serves a route beside the MCP endpoint on the same port', async () => {
    const server = guardedServer();
    const listener = await server.listen({ routes: { '/healthz': (_req, res) => res.end('ok') } });
    const health = await fetch(new URL('/healthz', listener.url));
    expect(await health.text()).toBe('ok');
    expect((await fetch(new URL('/other', listener.url))).status).toBe(404);
    await server.close();
  });
});
