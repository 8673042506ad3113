import { describe, expect, it } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer, ResourceTemplate, Server } from '@modelcontextprotocol/server';
import { Client as HttpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer, definePlugin, refusal } from '@sluice/core';
import { RequestFilterHeader, requestFilter } from '@sluice/upstream';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { z } from 'zod';
import { eventually, rpcFailure } from '../../core/test/fixtures/upstream-helpers.js';
import '@sluice/http';
import '@sluice/upstream';

// Real SDK servers imported in-process, a real SDK client in front of the gateway.

function gateway(): SluiceServer {
  return createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
}

async function clientOf(server: SluiceServer): Promise<{ client: Client; promptChanges: () => number }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  let promptChanges = 0;
  client.setNotificationHandler('notifications/prompts/list_changed', () => {
    promptChanges++;
  });
  await client.connect(clientSide);
  return { client, promptChanges: () => promptChanges };
}

/** An upstream with `count` resources under `prefix`, paging them 100 at a time itself. */
function pagingUpstream(prefix: string, count: number): Server {
  const server = new Server({ name: prefix, version: '1.0.0' }, { capabilities: { resources: {} } });
  const all = Array.from({ length: count }, (_, i) => ({ uri: `${prefix}://item/${i}`, name: `${prefix}-${i}` }));
  server.setRequestHandler('resources/list', (request) => {
    const offset = Number(request.params?.cursor ?? 0);
    const next = offset + 100;
    return { resources: all.slice(offset, next), ...(next < all.length ? { nextCursor: String(next) } : {}) };
  });
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
  server.setRequestHandler('resources/read', (request) => ({
    contents: [{ uri: request.params.uri, text: `content of ${request.params.uri}` }],
  }));
  return server;
}

function notesUpstream(name: string, uri: string, template?: string): McpServer {
  const mcp = new McpServer({ name, version: '1.0.0' });
  mcp.registerResource('note', uri, { mimeType: 'text/plain' }, () => ({ contents: [{ uri, text: `${name} note` }] }));
  if (template !== undefined)
    mcp.registerResource('notes', new ResourceTemplate(template, { list: undefined }), {}, (u) => ({
      contents: [{ uri: u.href, text: `${name} ${u.href}` }],
    }));
  mcp.registerPrompt('greet', { argsSchema: z.object({ who: z.string() }) }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `${name} greets ${who}` } }],
  }));
  return mcp;
}

describe('resources and prompts of several upstreams through the gateway', () => {
  it('pages through 5,000 resources of three upstreams, each exactly once, and reads from the right owner', async () => {
    const server = gateway();
    await server.import({ name: 'a', connection: { type: 'in-process', server: pagingUpstream('a', 2_000) } });
    await server.import({ name: 'b', connection: { type: 'in-process', server: pagingUpstream('b', 1_500) } });
    await server.import({ name: 'c', connection: { type: 'in-process', server: pagingUpstream('c', 1_500) } });
    const { client } = await clientOf(server);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      // Page by page, as a client that pages itself does (listResources() without a cursor would walk them all).
      const page = await client.request({ method: 'resources/list', params: cursor === undefined ? {} : { cursor } });
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toHaveLength(5_000);
    expect(new Set(seen).size).toBe(5_000);
    for (const uri of ['a://item/1999', 'b://item/0', 'c://item/1499']) {
      expect((await client.readResource({ uri })).contents[0]).toEqual({ uri, text: `content of ${uri}` });
    }
    await expect(client.listResources({ cursor: 'not-a-cursor' })).rejects.toThrow(/Invalid cursor/);
    await server.close();
  });

  it('namespaces prompts like tools and routes prompts/get and completion to their upstream', async () => {
    const server = gateway();
    await server.import({
      name: 'one',
      namespace: 'one',
      connection: { type: 'in-process', server: notesUpstream('one', 'note://one') },
    });
    await server.import({
      name: 'two',
      namespace: 'two',
      connection: { type: 'in-process', server: notesUpstream('two', 'note://two') },
    });
    const { client } = await clientOf(server);
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['one_greet', 'two_greet']);
    const got = await client.getPrompt({ name: 'two_greet', arguments: { who: 'Ada' } });
    expect(got.messages[0]?.content).toEqual({ type: 'text', text: 'two greets Ada' });
    await expect(client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } })).rejects.toThrow(/not found/);
    expect((await client.readResource({ uri: 'note://one' })).contents[0]).toMatchObject({ text: 'one note' });
    await server.close();
  });

  it('reports two upstreams claiming one URI, or overlapping templates, with both names, and keeps the first', async () => {
    const server = gateway();
    await server.import({
      name: 'first',
      namespace: 'f',
      connection: { type: 'in-process', server: notesUpstream('first', 'note://shared', 'files://{+path}') },
    });
    const second = await server.import({
      name: 'second',
      namespace: 's',
      connection: { type: 'in-process', server: notesUpstream('second', 'note://shared', 'files://logs/{name}') },
    });
    const reasons = second.skipped.map((s) => s.reason);
    expect(reasons).toContainEqual(expect.stringMatching(/"note:\/\/shared".*"first".*"second"/));
    expect(reasons).toContainEqual(
      expect.stringMatching(/files:\/\/logs\/\{name\}.*"second".*files:\/\/\{\+path\}.*"first"/),
    );
    const { client } = await clientOf(server);
    expect((await client.readResource({ uri: 'note://shared' })).contents[0]).toMatchObject({ text: 'first note' });
    expect((await client.readResource({ uri: 'files://logs/x' })).contents[0]).toMatchObject({
      text: 'first files://logs/x',
    });
    await server.close();
  });

  it('answers an unknown URI with -32602 carrying the URI when no upstream owns it', async () => {
    const server = gateway();
    await server.import({
      name: 'one',
      namespace: 'one',
      connection: { type: 'in-process', server: notesUpstream('one', 'note://one') },
    });
    await server.import({
      name: 'two',
      namespace: 'two',
      connection: { type: 'in-process', server: notesUpstream('two', 'note://two') },
    });
    const { client } = await clientOf(server);
    await expect(client.readResource({ uri: 'note://nobody' })).rejects.toMatchObject({
      code: -32602,
      data: { uri: 'note://nobody' },
    });
    await server.close();
  });

  it('advertises resources, prompts, completion and logging only when an upstream provides them', async () => {
    const server = gateway();
    const toolsOnly = new McpServer({ name: 'tools-only', version: '1.0.0' });
    toolsOnly.registerTool('ping', {}, () => ({ content: [{ type: 'text', text: 'pong' }] }));
    await server.import({ name: 'tools', connection: { type: 'in-process', server: toolsOnly } });
    const { client } = await clientOf(server);
    const caps = client.getServerCapabilities();
    expect(caps?.tools).toBeDefined();
    expect(caps?.resources).toBeUndefined();
    expect(caps?.prompts).toBeUndefined();
    expect(caps?.completions).toBeUndefined();
    expect(caps?.logging).toBeUndefined();
    await server.close();
  });

  it("tells clients when an upstream's prompt list changes", async () => {
    const server = gateway();
    const upstream = notesUpstream('one', 'note://one');
    await server.import({ name: 'one', namespace: 'one', connection: { type: 'in-process', server: upstream } });
    const { client, promptChanges } = await clientOf(server);
    upstream.registerPrompt('bye', {}, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'bye' } }],
    }));
    await eventually(() => promptChanges() > 0, 'the prompt list change reaches the client');
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['one_bye', 'one_greet']);
    await server.close();
  });

  it('hides and refuses the resources and prompts of an upstream a request excludes by header', async () => {
    const server = createServer({
      name: 'gateway',
      version: '1.0.0',
      logger: captureLogger().logger,
      plugins: [requestFilter()],
    });
    await server.import({
      name: 'one',
      namespace: 'one',
      connection: { type: 'in-process', server: notesUpstream('one', 'note://one') },
    });
    await server.import({
      name: 'two',
      namespace: 'two',
      connection: { type: 'in-process', server: notesUpstream('two', 'note://two') },
    });
    const listener = await server.listen();
    const client = new HttpClient({ name: 'filtered', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(listener.url, {
        requestInit: { headers: { [RequestFilterHeader.EXCLUDE_SERVERS]: 'two' } },
      }),
    );
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['note://one']);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['one_greet']);
    await expect(client.readResource({ uri: 'note://two' }, { cacheMode: 'bypass' })).rejects.toMatchObject({
      code: -32602,
      data: { uri: 'note://two' },
    });
    await expect(client.getPrompt({ name: 'two_greet', arguments: { who: 'x' } })).rejects.toThrow(/not found/);
    expect((await client.readResource({ uri: 'note://one' }, { cacheMode: 'bypass' })).contents[0]).toMatchObject({
      text: 'one note',
    });
    await client.close();
    await listener.close();
    await server.close();
  });

  it("leaves out the prompts and resources an upstream's allow and deny settings exclude, and never reads them", async () => {
    const server = gateway();
    const upstream = notesUpstream('one', 'note://one', 'notes://{+path}');
    upstream.registerResource('secret', 'note://secret', {}, () => ({
      contents: [{ uri: 'note://secret', text: 's' }],
    }));
    upstream.registerPrompt('other', {}, () => ({
      messages: [{ role: 'user', content: { type: 'text', text: 'x' } }],
    }));
    const result = await server.import({
      name: 'one',
      connection: { type: 'in-process', server: upstream },
      allowPrompts: ['greet'],
      denyResources: ['note://secret', 'notes://*'],
    });
    expect(result.skipped.map((s) => s.name).sort()).toEqual(['note://secret', 'notes://{+path}', 'other']);
    expect(result.skipped.find((s) => s.name === 'other')?.reason).toMatch(/allowPrompts patterns of upstream "one"/);
    const { client } = await clientOf(server);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet']);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['note://one']);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    // The only resource upstream, yet what its settings leave out is not read through it.
    await expect(client.readResource({ uri: 'note://secret' })).rejects.toMatchObject({ code: -32602 });
    await expect(client.readResource({ uri: 'notes://a/b' })).rejects.toMatchObject({ code: -32602 });
    await server.close();
  });
});

describe('plugin refusals and failures over loopback HTTP', () => {
  it('reach the SDK client with the JSON-RPC code, message and data they always had, in both protocol versions', async () => {
    const gate = definePlugin({
      name: 'gate',
      version: '1.0.0',
      apply: ({ hooks }) => {
        hooks.request.tap({ name: 'gate', kinds: ['resources/read', 'resources/subscribe'] }, (ctx) =>
          ctx.target === 'memo://sealed' ? refusal({ code: 'SEALED', message: 'not for this caller' }) : undefined,
        );
        hooks.preCall.tap('gate', (ctx) => {
          if (ctx.tool.name === 'boom') throw new Error('the secret token is hunter2');
          return undefined;
        });
      },
    });
    const server = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger, plugins: [gate] });
    server.tool({ name: 'boom', handler: () => ({ content: [{ type: 'text', text: 'never' }] }) });
    const upstream = notesUpstream('memo', 'memo://sealed');
    upstream.server.registerCapabilities({ resources: { subscribe: true } });
    upstream.server.setRequestHandler('resources/subscribe', () => ({}));
    await server.import({ name: 'memo', connection: { type: 'in-process', server: upstream } });
    const listener = await server.listen();
    const results: unknown[] = [];
    for (const mode of [undefined, { pin: '2026-07-28' as const }]) {
      const client = new HttpClient({ name: 'c', version: '1' }, mode ? { versionNegotiation: { mode } } : {});
      await client.connect(new StreamableHTTPClientTransport(listener.url));
      results.push(await rpcFailure(client.callTool({ name: 'boom', arguments: {} })));
      results.push(await rpcFailure(client.readResource({ uri: 'memo://sealed' })));
      if (mode === undefined) results.push(await rpcFailure(client.subscribeResource({ uri: 'memo://sealed' })));
      else results.push(await rpcFailure(client.listen({ resourceSubscriptions: ['memo://sealed'] })));
      await client.close();
    }
    const failed = {
      code: -32603,
      message: 'Internal error in plugin "gate" (preCall)',
      data: { code: 'PLUGIN_FAILED' },
    };
    const sealed = {
      code: -32600,
      message: 'SEALED: not for this caller',
      data: { code: 'SEALED', message: 'not for this caller', plugin: 'gate' },
    };
    // The last of each version is a 2025-11-25 subscription, then a 2026-07-28 listen filter the listener admits.
    expect(results).toEqual([failed, sealed, sealed, failed, sealed, sealed]);
    await listener.close();
    await server.close();
  });
});
