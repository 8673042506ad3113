import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/core/testing';

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
    const result = (await client.callTool({ name: 'confirm', arguments: {} })) as CallToolResult;
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
    client.setNotificationHandler('notifications/tools/list_changed', () => void changed++);
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
