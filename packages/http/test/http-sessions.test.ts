import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
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

describe("a caller's share of 2025-11-25 sessions", () => {
  const HOG = 'a'.repeat(64);
  const OTHER = 'b'.repeat(64);
  const headers = (key: string, id?: string) => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${key}`,
    ...(id === undefined ? {} : { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }),
  });
  const post = async (url: URL, key: string, body: unknown, id?: string): Promise<Response> => {
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: headers(key, id) });
    await response.clone().text();
    return response;
  };
  /** Opens a session as `key` and finishes its handshake; its id. */
  async function opened(url: URL, key: string): Promise<string> {
    const params = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } };
    const response = await post(url, key, { jsonrpc: '2.0', id: 1, method: 'initialize', params });
    expect(response.status).toBe(200);
    const id = response.headers.get('mcp-session-id')!;
    await post(url, key, { jsonrpc: '2.0', method: 'notifications/initialized' }, id);
    return id;
  }
  const status = async (url: URL, key: string, id: string): Promise<number> =>
    (await post(url, key, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, id)).status;
  const keyed = (options: Record<string, unknown>) => ({
    auth: {
      type: 'apiKeys' as const,
      keys: [
        { name: 'hog', key: HOG },
        { name: 'other', key: OTHER },
      ],
    },
    ...options,
  });

  it("keeps one caller to its share, evicting its own least recently used session, never another caller's", async () => {
    const server = askingServer();
    const listener = await server.listen(keyed({ maxSessions: 6, maxSessionsPerCaller: 3 }));
    const theirs = await opened(listener.url, OTHER);
    // The hog opens as many sessions as the whole table holds, and more.
    const hogs: string[] = [];
    for (let i = 0; i < 10; i++) hogs.push(await opened(listener.url, HOG));
    expect(await status(listener.url, OTHER, theirs)).toBe(200);
    // Its three most recent are kept; every older one was its own to give up.
    for (const id of hogs.slice(0, 7)) expect(await status(listener.url, HOG, id)).toBe(404);
    for (const id of hogs.slice(7)) expect(await status(listener.url, HOG, id)).toBe(200);
    // The other caller still opens sessions of its own.
    const second = await opened(listener.url, OTHER);
    expect(await status(listener.url, OTHER, second)).toBe(200);
    expect(await status(listener.url, OTHER, theirs)).toBe(200);
    await server.close();
  });

  it('defaults the share to a quarter of maxSessions', async () => {
    const server = askingServer();
    const listener = await server.listen(keyed({ maxSessions: 8 }));
    const theirs = await opened(listener.url, OTHER);
    const hogs: string[] = [];
    for (let i = 0; i < 5; i++) hogs.push(await opened(listener.url, HOG));
    const alive = await Promise.all(hogs.map((id) => status(listener.url, HOG, id)));
    expect(alive).toEqual([404, 404, 404, 200, 200]);
    expect(await status(listener.url, OTHER, theirs)).toBe(200);
    await server.close();
  });

  it("holds a caller's share of the memory budget: the same fraction as its share of the count", async () => {
    const server = askingServer();
    // A share of 25 sessions of 100, but of the memory budget (eight sessions' worth), a quarter: two sessions.
    const budget = 8 * (16 * 1024 + 400);
    const listener = await server.listen(keyed({ maxSessions: 100, maxSessionMemoryBytes: budget }));
    const theirs = await opened(listener.url, OTHER);
    const hogs: string[] = [];
    for (let i = 0; i < 4; i++) hogs.push(await opened(listener.url, HOG));
    const alive = await Promise.all(hogs.map((id) => status(listener.url, HOG, id)));
    expect(alive).toEqual([404, 404, 200, 200]);
    expect(await status(listener.url, OTHER, theirs)).toBe(200);
    await server.close();
  });

  it('refuses a new session with 429 when every session of the caller has a request running', async () => {
    const server = askingServer();
    const listener = await server.listen(keyed({ maxSessionsPerCaller: 1 }));
    const client = new Client({ name: 'c', version: '1' }, { capabilities: { elicitation: { form: {} } } });
    let asked!: () => void;
    const question = new Promise<void>((resolve) => (asked = resolve));
    let answer!: (value: { action: 'accept'; content: { ok: boolean } }) => void;
    client.setRequestHandler('elicitation/create', () => {
      asked();
      return new Promise((resolve) => (answer = resolve));
    });
    await client.connect(
      new StreamableHTTPClientTransport(listener.url, { requestInit: { headers: { authorization: `Bearer ${HOG}` } } }),
    );
    const running = client.callTool({ name: 'confirm', arguments: {} });
    await question;
    const params = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } };
    const refused = await post(listener.url, HOG, { jsonrpc: '2.0', id: 1, method: 'initialize', params });
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/Too many sessions for this caller/);
    // Another caller is not affected.
    await opened(listener.url, OTHER);
    answer({ action: 'accept', content: { ok: true } });
    expect(textOf(await running)).toBe('accept:{"ok":true}');
    // Once its call is answered, the caller's session is its own least recently used: a new one replaces it.
    await opened(listener.url, HOG);
    await client.close();
    await server.close();
  });
});
