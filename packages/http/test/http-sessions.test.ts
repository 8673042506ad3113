import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/core/testing';
import '@sluice/http';

function askingServer() {
  const server = createServer({ name: 'asker', version: '1', logger: captureLogger().logger });
  server.tool({
    name: 'confirm',
    handler: async (_args, ctx) => {
      const answer = await ctx.mcp!.mcpReq.elicitInput({
        mode: 'form',
        message: 'Proceed?',
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      });
      return { content: [{ type: 'text', text: `${answer.action}:${JSON.stringify(answer.content ?? {})}` }] };
    },
  });
  return server;
}

describe('2025-11-25 sessions over HTTP', () => {
  it('carries an elicitation from a tool to the client and back within one call', async () => {
    const server = askingServer();
    const listener = await server.listen();
    const client = new Client({ name: 'c', version: '1' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { ok: true } }));
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    const result = await client.callTool({ name: 'confirm', arguments: {} });
    expect(textOf(result)).toBe('accept:{"ok":true}');
    await client.close();
    await server.close();
  });

  it('answers an unknown session id with 404 and a body that is not JSON with -32700', async () => {
    const server = askingServer();
    const listener = await server.listen();
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const stale = await fetch(listener.url, {
      method: 'POST',
      body: ping,
      headers: { ...headers, 'mcp-session-id': 'no-such-session' },
    });
    expect(stale.status).toBe(404);
    const garbage = await fetch(listener.url, { method: 'POST', body: '{not json', headers });
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toMatchObject({ error: { code: -32700 } });
    await server.close();
  });

  it('tells a session client that the tool list changed', async () => {
    const server = askingServer();
    const listener = await server.listen();
    let changed = 0;
    const client = new Client({ name: 'c', version: '1' });
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    await client.listTools();
    server.tool({ name: 'later', handler: () => ({ content: [] }) });
    await server.ready();
    await expect.poll(() => changed, { timeout: 5_000 }).toBeGreaterThan(0);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('later');
    await client.close();
    await server.close();
  });
});

describe('the bounds on 2025-11-25 sessions', () => {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const initialize = (name = 'c') =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name, version: '1' } },
    });
  /** Opens a session and finishes its handshake; its id. */
  async function finished(url: URL): Promise<string> {
    const opened = await fetch(url, { method: 'POST', body: initialize(), headers });
    await opened.text();
    const id = opened.headers.get('mcp-session-id')!;
    const note = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await (
      await fetch(url, {
        method: 'POST',
        body: note,
        headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
      })
    ).text();
    return id;
  }
  const alive = async (url: URL, id: string): Promise<number> => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const response = await fetch(url, {
      method: 'POST',
      body: list,
      headers: { ...headers, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' },
    });
    await response.text();
    return response.status;
  };

  it('evicts the least recently used idle session when the memory budget is spent, never a newer one', async () => {
    const server = askingServer();
    // Room for three sessions: each is charged its initialize request and 16 KiB.
    const listener = await server.listen({ maxSessionMemoryBytes: 3 * (16 * 1024 + 400) });
    const [first, second, third] = [
      await finished(listener.url),
      await finished(listener.url),
      await finished(listener.url),
    ];
    expect(await alive(listener.url, first)).toBe(200); // `first` is now the most recently used
    const fourth = await finished(listener.url);
    expect(await alive(listener.url, second)).toBe(404);
    for (const id of [first, third, fourth]) expect(await alive(listener.url, id)).toBe(200);
    await server.close();
  });

  it('evicts unfinished handshakes before any finished session', async () => {
    const server = askingServer();
    const listener = await server.listen({ maxSessions: 4 });
    const kept = await finished(listener.url);
    for (let i = 0; i < 50; i++)
      await (await fetch(listener.url, { method: 'POST', body: initialize(), headers })).text();
    expect(await alive(listener.url, kept)).toBe(200);
    await server.close();
  });

  it('refuses an initialize larger than maxInitializeBytes with 413', async () => {
    const server = askingServer();
    const listener = await server.listen({ maxInitializeBytes: 1024 });
    const response = await fetch(listener.url, { method: 'POST', body: initialize('n'.repeat(2_000)), headers });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: -32602 } });
    await server.close();
  });
});
