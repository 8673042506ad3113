import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer, ProtocolError, Server } from '@modelcontextprotocol/server';
import { McpServer as V1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CoreErrorCode, SluiceError, createServer, definePlugin } from '@sluice/core';
import type { ImportBatch, Plugin, SluiceServer, Tool } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { call, connectClient, eventually } from '../../core/test/fixtures/upstream-helpers.js';
import '../src/index.js'; // gives every server import()

/** A v2 McpServer with tools of each kind of result; it reports an unrelated serverInfo name on purpose. */
function v2Upstream() {
  const server = new McpServer({ name: 'impostor', version: '9.9.9' });
  server.registerTool(
    'add',
    {
      title: 'Add',
      description: 'Adds two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'weather',
    {
      description: 'Structured weather',
      inputSchema: z.object({ city: z.string() }),
      outputSchema: z.object({ city: z.string(), celsius: z.number() }),
    },
    async ({ city }) => ({
      content: [{ type: 'text', text: `${city}: 21` }],
      structuredContent: { city, celsius: 21 },
    }),
  );
  server.registerTool('fails', { description: 'Reports a tool error' }, async () => ({
    content: [{ type: 'text', text: 'the disk is full' }],
    isError: true,
  }));
  server.registerTool('meta', { description: 'Returns the _meta it received' }, async (ctx) => ({
    content: [{ type: 'text', text: JSON.stringify(ctx.mcpReq._meta ?? {}) }],
  }));
  return server;
}

function v1Upstream() {
  const server = new V1McpServer({ name: 'v1-upstream', version: '1.0.0' });
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }),
  );
  server.registerTool('fails', { description: 'Reports a tool error' }, async () => ({
    content: [{ type: 'text', text: 'nope' }],
    isError: true,
  }));
  return server;
}

async function direct(upstream: { connect(t: never): Promise<void> }): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await upstream.connect(serverSide as never);
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

function sluice(plugins: Plugin[] = []): { server: SluiceServer; logs: ReturnType<typeof captureLogger> } {
  const logs = captureLogger();
  return { server: createServer({ name: 'gateway', version: '1.0.0', logger: logs.logger, plugins }), logs };
}

/** A plugin that records every batch the import hook sees. */
function recorder() {
  const batches: { source: ImportBatch['source']; tools: { name: string; description: string | undefined }[] }[] = [];
  const plugin = definePlugin({
    name: 'recorder',
    version: '1.0.0',
    apply: ({ hooks }) =>
      hooks.import.tap('recorder', (batch) => {
        batches.push({
          source: batch.source,
          tools: batch.tools.map((t) => ({ name: t.name, description: t.definition.description })),
        });
        return batch;
      }),
  });
  return { plugin, batches };
}

const byName = (a: Tool, b: Tool) => a.name.localeCompare(b.name);

describe('importing an in-process SDK server', () => {
  it('lists and answers exactly as the v2 McpServer does when called directly', async () => {
    const reference = await direct(v2Upstream());
    const { server } = sluice();
    const result = await server.import({ name: 'tools', connection: { type: 'in-process', server: v2Upstream() } });
    expect([...result.imported].sort()).toEqual(['add', 'fails', 'meta', 'weather']);
    expect(result.skipped).toEqual([]);
    const { client } = await connectClient(server);

    expect((await client.listTools()).tools.sort(byName)).toEqual((await reference.listTools()).tools.sort(byName));
    for (const [name, args] of [
      ['add', { a: 2, b: 3 }],
      ['weather', { city: 'Oslo' }],
      ['fails', {}],
    ] as const) {
      expect(await call(client, name, args)).toEqual(await call(reference, name, args));
    }
    await client.close();
    await reference.close();
    await server.close();
  });

  it('imports a v1 McpServer and answers as it does', async () => {
    const reference = await direct(v1Upstream());
    const { server } = sluice();
    await server.import({ name: 'legacy', connection: { type: 'in-process', server: v1Upstream() } });
    const { client } = await connectClient(server);
    expect((await client.listTools()).tools.sort(byName)).toEqual((await reference.listTools()).tools.sort(byName));
    expect(await call(client, 'add', { a: 1, b: 41 })).toEqual(await call(reference, 'add', { a: 1, b: 41 }));
    expect(await call(client, 'fails')).toEqual(await call(reference, 'fails'));
    await client.close();
    await reference.close();
    await server.close();
  });

  it('exposes tools under the namespace, sourced by the configured name and not the name the upstream reports', async () => {
    const { server } = sluice();
    const result = await server.import({
      name: 'calc',
      namespace: 'math',
      connection: { type: 'in-process', server: v2Upstream() },
      trusted: true,
    });
    expect(result.imported).toContain('math_add');
    const add = server.tools().find((t) => t.name === 'math_add');
    expect(add?.source).toEqual({
      kind: 'upstream',
      upstream: 'calc',
      originalName: 'add',
      trusted: true,
      connection: { type: 'in-process' },
    });
    expect(add?.definition).toMatchObject({ name: 'math_add', title: 'Add', annotations: { readOnlyHint: true } });
    expect(JSON.stringify(server.upstreams())).not.toContain('impostor');

    const { client } = await connectClient(server);
    expect(textOf(await call(client, 'math_add', { a: 4, b: 5 }))).toBe('9');
    await client.close();
    await server.close();
  });

  it('joins namespace and name with the configured separator', async () => {
    const { server } = sluice();
    const result = await server.import({
      name: 'calc',
      namespace: 'math',
      separator: '.',
      connection: { type: 'in-process', server: v2Upstream() },
    });
    expect([...result.imported].sort()).toEqual(['math.add', 'math.fails', 'math.meta', 'math.weather']);
    await server.close();
  });

  it('imports only what allowTools matches and nothing denyTools matches, and says why for the rest', async () => {
    const { server } = sluice();
    const result = await server.import({
      name: 'calc',
      connection: { type: 'in-process', server: v2Upstream() },
      allowTools: ['a*', 'w?ather', 'fails'],
      denyTools: ['fail*'],
    });
    expect([...result.imported].sort()).toEqual(['add', 'weather']);
    expect(result.skipped).toEqual(
      expect.arrayContaining([
        { name: 'fails', reason: 'Denied by the denyTools patterns of upstream "calc"', by: 'core' },
        { name: 'meta', reason: 'Not matched by the allowTools patterns of upstream "calc"', by: 'core' },
      ]),
    );
    await server.close();
  });

  it('rejects bad import options with a SluiceError naming each bad field', async () => {
    const { server } = sluice();
    const attempts: [unknown, RegExp][] = [
      [{ name: 'x', connection: { type: 'http', url: 'not a url' } }, /connection\.url/],
      [{ name: 'x', connection: { type: 'http', url: 'ftp://example.com/mcp' } }, /connection\.url/],
      [{ name: 'has space', connection: { type: 'stdio', command: 'node' } }, /name/],
      [{ name: 'x', connection: { type: 'carrier-pigeon' } }, /connection\.type/],
      [{ name: 'x', connection: { type: 'in-process', server: {} } }, /connection\.server/],
      [{ name: 'x', connection: { type: 'stdio', command: 'node' }, timeoutMs: -1 }, /timeoutMs/],
      [{ name: 'x', connection: { type: 'stdio', command: 'node' }, allowTools: 'a*' }, /allowTools/],
      [
        { name: 'x', connection: { type: 'stdio', command: 'node' }, retry: { initialDelayMs: 100, maxDelayMs: 10 } },
        /retry\.maxDelayMs/,
      ],
    ];
    for (const [options, field] of attempts) {
      const error = await server.import(options as never).catch((e: unknown) => e);
      expect(SluiceError.is(error), JSON.stringify(options)).toBe(true);
      expect((error as SluiceError).code).toBe(CoreErrorCode.INVALID_OPTIONS);
      expect((error as SluiceError).message).toMatch(field);
    }
    await server.import({ name: 'calc', connection: { type: 'in-process', server: v2Upstream() } });
    await expect(
      server.import({ name: 'calc', connection: { type: 'in-process', server: v2Upstream() } }),
    ).rejects.toThrow(/already imported/);
    await server.close();
  });

  it('reports a name another source already exposes as skipped, and keeps the first', async () => {
    const { server } = sluice();
    server.tool({ name: 'add', handler: () => ({ content: [{ type: 'text', text: 'local' }] }) });
    await server.ready();
    const result = await server.import({ name: 'calc', connection: { type: 'in-process', server: v2Upstream() } });
    expect(result.imported).not.toContain('add');
    expect(result.skipped.find((s) => s.name === 'add')?.reason).toMatch(/collision/i);
    expect(textOf(await server.call('add'))).toBe('local');
    await server.close();
  });
});

describe('run-time discovery', () => {
  it('re-lists on list_changed, passes the new batch through the import hook, and notifies Sluice clients', async () => {
    const upstream = v2Upstream();
    const { plugin, batches } = recorder();
    const { server } = sluice([plugin]);
    await server.import({ name: 'live', namespace: 'live', connection: { type: 'in-process', server: upstream } });
    expect(batches).toHaveLength(1);
    expect(batches[0]?.source).toMatchObject({ kind: 'upstream', upstream: 'live' });
    const { client, nextListChanged } = await connectClient(server);

    // A tool appears upstream.
    let changed = nextListChanged();
    const added = upstream.registerTool(
      'shout',
      { description: 'Upper-cases', inputSchema: z.object({ text: z.string() }) },
      async ({ text }) => ({
        content: [{ type: 'text', text: text.toUpperCase() }],
      }),
    );
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('live_shout');
    expect(textOf(await call(client, 'live_shout', { text: 'hey' }))).toBe('HEY');

    // An existing tool changes its definition: the import hook sees the new one.
    changed = nextListChanged();
    added.update({ description: 'Upper-cases LOUDLY' });
    await changed;
    expect(batches.at(-1)?.tools).toContainEqual({ name: 'live_shout', description: 'Upper-cases LOUDLY' });
    expect((await client.listTools()).tools.find((t) => t.name === 'live_shout')?.description).toBe(
      'Upper-cases LOUDLY',
    );

    // A tool goes away upstream: Sluice stops exposing it.
    changed = nextListChanged();
    added.remove();
    await changed;
    await eventually(
      async () => !(await client.listTools()).tools.some((t) => t.name === 'live_shout'),
      'live_shout to disappear',
    );
    await expect(call(client, 'live_shout', { text: 'x' })).rejects.toThrow(/Unknown tool/);
    await client.close();
    await server.close();
  });

  it('tells clients nothing when the upstream lists its tools again unchanged', async () => {
    const upstream = v2Upstream();
    const { server, logs } = sluice();
    await server.import({ name: 'live', connection: { type: 'in-process', server: upstream } });
    const { client, listChanged, nextListChanged } = await connectClient(server);
    // Announced, but nothing changed: the gateway lists again, and has no news.
    await upstream.server.sendToolListChanged();
    await eventually(() => logs.events('upstream.tools').length === 2, 'the second listing');
    // Then a real change, the last thing the client is sent.
    const changed = nextListChanged();
    upstream.registerTool('shout', { description: 'Upper-cases' }, async () => ({ content: [] }));
    await changed;
    expect(listChanged()).toBe(1);
    await client.close();
    await server.close();
  });

  it('stops exposing a tool whose changed definition the import hook now skips', async () => {
    const upstream = v2Upstream();
    const gate = definePlugin({
      name: 'gate',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.import.tap('gate', (batch) => {
          for (const tool of [...batch.tools])
            if (tool.definition.description?.includes('DELETE')) batch.skip(tool, 'looks destructive', 'gate');
          return batch;
        }),
    });
    const { server } = sluice([gate]);
    await server.import({ name: 'live', connection: { type: 'in-process', server: upstream } });
    const { client, nextListChanged } = await connectClient(server);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('add');

    const changed = nextListChanged();
    const add = (
      upstream as unknown as { _registeredTools: Record<string, { update(u: { description: string }): void }> }
    )._registeredTools.add;
    add?.update({ description: 'Adds, then DELETE everything' });
    await changed;
    await eventually(
      async () => !(await client.listTools()).tools.some((t) => t.name === 'add'),
      'add to be withdrawn',
    );
    expect(server.skipped().some((s) => s.name === 'add' && s.by === 'gate')).toBe(true);
    await client.close();
    await server.close();
  });
});

describe('what the import hook keeps out', () => {
  it("holds an upstream's skipped tools to its last listing, however often it lists them again", async () => {
    // Attack: an upstream whose tools a plugin keeps out announces a change over and over; each listing appended
    // every skipped tool again, so the gateway's memory grew with each announcement.
    const upstream = v2Upstream();
    for (let i = 0; i < 20; i++)
      upstream.registerTool(`wipe_${i}`, { description: 'DELETE everything' }, async () => ({ content: [] }));
    const gate = definePlugin({
      name: 'gate',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.import.tap('gate', (batch) => {
          for (const tool of [...batch.tools])
            if (tool.definition.description?.includes('DELETE')) batch.skip(tool, 'looks destructive', 'gate');
          return batch;
        }),
    });
    const { server, logs } = sluice([gate]);
    await server.import({ name: 'live', connection: { type: 'in-process', server: upstream } });
    const kept = () => server.skipped().filter((s) => s.by === 'gate');
    expect(kept()).toHaveLength(20);
    for (let listing = 2; listing <= 6; listing++) {
      await upstream.server.sendToolListChanged();
      await eventually(() => logs.events('upstream.tools').length === listing, `listing ${listing}`);
    }
    expect(kept()).toHaveLength(20);
    // A tool the gate lets through again leaves the list; one it now keeps out joins it, once.
    const tools = (
      upstream as unknown as { _registeredTools: Record<string, { update(u: { description: string }): void }> }
    )._registeredTools;
    tools.wipe_0?.update({ description: 'Reads' });
    tools.add?.update({ description: 'Adds, then DELETE everything' });
    const expected = ['add', ...Array.from({ length: 19 }, (_, i) => `wipe_${i + 1}`)].sort().join();
    const names = () =>
      kept()
        .map((s) => s.name)
        .sort()
        .join();
    await eventually(() => names() === expected, 'the two changes listed');
    expect(kept()).toHaveLength(20);
    await server.close();
  });

  it('forgets what the import hook kept out once the upstream lists no tool at all', async () => {
    const upstream = new McpServer({ name: 'emptying', version: '1.0.0' });
    const handles = Array.from({ length: 5 }, (_, i) =>
      upstream.registerTool(`wipe_${i}`, { description: 'DELETE everything' }, async () => ({ content: [] })),
    );
    const seen: number[] = [];
    const gate = definePlugin({
      name: 'gate',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.import.tap('gate', (batch) => {
          seen.push(batch.tools.length);
          for (const tool of [...batch.tools]) batch.skip(tool, 'looks destructive', 'gate');
          return batch;
        }),
    });
    const { server, logs } = sluice([gate]);
    await server.import({ name: 'live', connection: { type: 'in-process', server: upstream } });
    expect(server.skipped().filter((s) => s.by === 'gate')).toHaveLength(5);
    for (const handle of handles) handle.remove();
    await eventually(() => server.skipped().every((s) => s.by !== 'gate'), 'the kept-out tools forgotten');
    // The import hook saw the empty listing: what it keeps of the upstream's tools is emptied too.
    expect(seen.at(-1)).toBe(0);
    expect(logs.events('upstream.tools').at(-1)).toMatchObject({ imported: 0, skipped: 0 });
    await server.close();
  });

  it('names at most 20 removed tools in its upstream.tools line, and counts them all', async () => {
    // Attack: an upstream renames its many tools at each listing; the line after each listing named every tool it
    // dropped, so the log grew by a whole tool list per announcement.
    const upstream = new McpServer({ name: 'renamer', version: '1.0.0' });
    const handles = Array.from({ length: 150 }, (_, i) =>
      upstream.registerTool(`tool_${i}_${'x'.repeat(40)}`, { description: 'Reads' }, async () => ({ content: [] })),
    );
    const { server, logs } = sluice([]);
    await server.import({ name: 'live', connection: { type: 'in-process', server: upstream } });
    for (const [i, handle] of handles.entries()) handle.update({ name: `renamed_${i}` });
    const removed = () => logs.events('upstream.tools').reduce((sum, line) => sum + (line.removedCount as number), 0);
    await eventually(() => removed() === 150, 'every old name counted as removed');
    expect(server.tools().every((tool) => tool.name.startsWith('renamed_'))).toBe(true);
    for (const line of logs.events('upstream.tools')) {
      expect((line.removed as string[]).length).toBeLessThanOrEqual(20);
      expect((line.removed as string[]).length).toBe(Math.min(20, line.removedCount as number));
    }
    await server.close();
  });
});

describe('proxied calls', () => {
  it('forwards the outgoing _meta upstream: plugin keys and the caller trace context', async () => {
    const stamp = definePlugin({
      name: 'stamp',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.preCall.tap('stamp', (ctx) => {
          ctx.outgoingMeta['dev.sluice/callStack'] = ['caller', ctx.tool.name];
          return undefined;
        }),
    });
    const { server } = sluice([stamp]);
    await server.import({ name: 'up', connection: { type: 'in-process', server: v2Upstream() } });
    const { client } = await connectClient(server);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const seen = JSON.parse(
      textOf(await call(client, 'meta', {}, { traceparent, secretOfTheCaller: 'not forwarded' })),
    ) as Record<string, unknown>;
    expect(seen['dev.sluice/callStack']).toEqual(['caller', 'meta']);
    expect(seen.traceparent).toBe(traceparent);
    expect(seen).not.toHaveProperty('secretOfTheCaller');
    await client.close();
    await server.close();
  });

  it('forwards upstream progress to the caller under the caller token', async () => {
    const upstream = new McpServer({ name: 'p', version: '1' });
    upstream.registerTool('work', { description: 'Reports progress' }, async (ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        for (const progress of [1, 2])
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 2, message: `step ${progress}` },
          });
      }
      return { content: [{ type: 'text', text: 'done' }] };
    });
    const { server } = sluice();
    await server.import({ name: 'p', connection: { type: 'in-process', server: upstream } });
    const { client } = await connectClient(server);
    const progress: unknown[] = [];
    const result = await client.callTool({ name: 'work', arguments: {} }, { onprogress: (p) => progress.push(p) });
    expect(textOf(result)).toBe('done');
    await eventually(() => progress.length === 2, 'both progress notifications');
    expect(progress).toEqual([
      { progress: 1, total: 2, message: 'step 1' },
      { progress: 2, total: 2, message: 'step 2' },
    ]);
    await client.close();
    await server.close();
  });

  it('cancels the upstream call when the caller cancels', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let upstreamAborted = false;
    const upstream = new McpServer({ name: 'slow', version: '1' });
    upstream.registerTool('wait', { description: 'Waits until cancelled' }, (ctx) => {
      started();
      return new Promise((resolve) =>
        ctx.mcpReq.signal.addEventListener('abort', () => {
          upstreamAborted = true;
          resolve({ content: [{ type: 'text', text: 'aborted' }] });
        }),
      );
    });
    const { server } = sluice();
    await server.import({ name: 'slow', connection: { type: 'in-process', server: upstream } });
    const { client } = await connectClient(server);
    const controller = new AbortController();
    const pending = client.callTool({ name: 'wait', arguments: {} }, { signal: controller.signal });
    await running;
    controller.abort('changed my mind');
    await expect(pending).rejects.toThrow();
    await eventually(() => upstreamAborted, 'the upstream to see the cancellation');
    // A cancellation is the caller's choice, not a fault of the upstream.
    expect(server.upstreams()[0]?.health).toBe('healthy');
    await client.close();
    await server.close();
  });

  it('turns an upstream JSON-RPC error into an isError result that names the upstream', async () => {
    const upstream = new Server({ name: 'raw', version: '1' }, { capabilities: { tools: {} } });
    upstream.setRequestHandler('tools/list', async () => ({
      tools: [{ name: 'explode', inputSchema: { type: 'object' } }],
    }));
    upstream.setRequestHandler('tools/call', async () => {
      throw new ProtocolError(-32603, 'the database exploded');
    });
    const { server } = sluice();
    await server.import({ name: 'db', connection: { type: 'in-process', server: upstream } });
    const { client } = await connectClient(server);
    const result = await call(client, 'explode');
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: CoreErrorCode.UPSTREAM_ERROR, upstream: 'db' });
    expect(textOf(result)).toMatch(/Upstream "db" refused "explode": .*the database exploded/);
    expect(server.upstreams()[0]?.health).toBe('healthy');
    await client.close();
    await server.close();
  });

  it('stops at the tool responseLimitBytes a plugin set, with UPSTREAM_RESPONSE_TOO_LARGE', async () => {
    const upstream = new McpServer({ name: 'big', version: '1' });
    upstream.registerTool(
      'big',
      { description: 'Big answers', inputSchema: z.object({ bytes: z.number() }) },
      async ({ bytes }) => ({
        content: [{ type: 'text', text: 'x'.repeat(bytes) }],
      }),
    );
    const cap = definePlugin({
      name: 'cap',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.import.tap('cap', (batch) => {
          for (const tool of batch.tools) tool.responseLimitBytes = 2_000;
          return batch;
        }),
    });
    const { server } = sluice([cap]);
    await server.import({ name: 'big', connection: { type: 'in-process', server: upstream } });
    const { client } = await connectClient(server);
    expect(textOf(await call(client, 'big', { bytes: 100 }))).toHaveLength(100);
    const tooBig = await call(client, 'big', { bytes: 50_000 });
    expect(errorOf(tooBig)).toMatchObject({ code: CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE, upstream: 'big' });
    expect(textOf(tooBig)).toContain('2000 bytes');
    await client.close();
    await server.close();
  });
});

describe('closing', () => {
  it('closes every upstream connection with the server', async () => {
    const upstream = v2Upstream();
    let upstreamClosed = false;
    const { server } = sluice();
    await server.import({ name: 'up', connection: { type: 'in-process', server: upstream } });
    upstream.server.onclose = () => {
      upstreamClosed = true;
    };
    expect(server.upstreams()).toMatchObject([
      { name: 'up', transport: 'in-process', health: 'healthy', tools: expect.arrayContaining(['add']) as unknown },
    ]);
    await server.close();
    expect(upstreamClosed).toBe(true);
    await expect(
      server.import({ name: 'late', connection: { type: 'in-process', server: v2Upstream() } }),
    ).rejects.toThrow(/closed/);
  });

  it('refuses to import into a server that is already closed', async () => {
    const { server } = sluice();
    await server.close();
    await expect(
      server.import({ name: 'late', connection: { type: 'in-process', server: v2Upstream() } }),
    ).rejects.toThrow(/closed/);
    expect(server.upstreams()).toEqual([]);
  });
});

describe('connection summaries', () => {
  it('show plugins the transport, a URL without credentials or query, and header names without values', async () => {
    const { summarize } = await import('../src/discovery.js');
    expect(
      summarize({
        type: 'http',
        url: 'https://user:pw@api.example.com/mcp?token=abc',
        headers: { Authorization: 'Bearer s3cret' },
      } as never),
    ).toEqual({
      type: 'http',
      url: 'https://api.example.com/mcp',
      headerNames: ['authorization'],
    });
    expect(
      summarize({ type: 'stdio', command: 'node', args: ['server.js'], env: { TOKEN: 'hidden' } } as never),
    ).toEqual({
      type: 'stdio',
      command: 'node',
      args: ['server.js'],
    });
  });
});
