// Defects a review of the core found, each pinned by the test that showed it.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer as McpServerV2, InMemoryTransport } from '@modelcontextprotocol/server';
import { CoreErrorCode, MemoryStore, adopt, createServer, definePlugin } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, createTestKit, textOf } from '@sluice/testing';
import '@sluice/http';
import '@sluice/stdio';

const echo = {
  name: 'echo',
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }: { text: string }) => ({ content: [{ type: 'text' as const, text }] }),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('review findings', () => {
  it('answers a call to a healthy tool while another tool fails to register', async () => {
    const failing = definePlugin({
      name: 'failing-import',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.import.tapPromise('failing-import', async (batch) => {
          if (batch.tools.some((t) => t.name === 'broken')) {
            await sleep(50);
            throw new Error('import tap failed for broken');
          }
          return batch;
        }),
    });
    const kit = await createTestKit({ plugins: [failing], tools: [echo] });
    kit.server.tool({ name: 'broken', handler: () => ({ content: [] }) });
    // 'echo' has nothing to do with 'broken': its call must still succeed.
    const result = await kit.call('echo', { text: 'hi' }).catch((error: unknown) => error);
    await kit.close();
    expect(result).not.toBeInstanceOf(Error);
    expect(textOf(result as CallToolResult)).toBe('hi');
  });

  it('keeps an adopted tool callable under its own name when an import tap renames it', async () => {
    const renamer = definePlugin({
      name: 'renamer',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.import.tap('renamer', (batch) => {
          for (const tool of batch.tools) tool.name = `ns_${tool.name}`;
          return batch;
        }),
    });
    const app = new McpServerV2({ name: 'app', version: '1.0.0' });
    app.registerTool('lookup', { inputSchema: z.object({ id: z.string() }) }, async ({ id }) => ({
      content: [{ type: 'text', text: `found ${id}` }],
    }));
    const sluice = adopt(app, [renamer], { logger: captureLogger().logger });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await app.connect(b);
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(a);
    // README: "import runs once per tool (skips apply; renames do not)".
    const listed = (await client.listTools()).tools.map((t) => t.name);
    const called = await client.callTool({ name: 'lookup', arguments: { id: 'x' } }).catch((error: unknown) => error);
    await client.close();
    await sluice.close();
    expect(called).not.toBeInstanceOf(Error); // today: -32602 Unknown tool: "lookup"
    expect(textOf(called as CallToolResult)).toBe('found x');
    expect(listed).toEqual(['lookup']); // today: [] (hidden from tools/list)
  });

  it('does not expire a 2025-11-25 session while one of its calls is still running', async () => {
    const server = createServer({ name: 's', version: '1', logger: captureLogger().logger });
    server.tool({
      name: 'slow',
      handler: async () => {
        await sleep(2_500);
        return { content: [{ type: 'text', text: 'finished' }] };
      },
    });
    // An idle time the call outlasts, yet long enough that a loaded machine's gap between the client's initialize
    // and its next message (100 ms was seen to pass) does not end the session before the call.
    const listener = await server.listen({ sessionIdleMs: 1_000 });
    const client = new Client({ name: 'c', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    const result = await client
      .callTool({ name: 'slow', arguments: {} }, { timeout: 10_000 })
      .catch((error: unknown) => error);
    await client.close().catch(() => {});
    await server.close();
    // Today the sweeper closes the session mid-call and the answer never comes: REQUEST_TIMEOUT.
    expect(result).not.toBeInstanceOf(Error);
    expect(textOf(result as CallToolResult)).toBe('finished');
  });

  it('answers a call to an inherited Object property name on an adopted server as an unknown tool', async () => {
    const app = new McpServerV2({ name: 'app', version: '1.0.0' });
    app.registerTool('lookup', { inputSchema: z.object({ id: z.string() }) }, async ({ id }) => ({
      content: [{ type: 'text', text: `found ${id}` }],
    }));
    const sluice = adopt(app, [], { logger: captureLogger().logger });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await app.connect(b);
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(a);
    const answer = await client.callTool({ name: 'constructor', arguments: {} }).catch((error: unknown) => error);
    const exposed = sluice.tools().map((t) => t.name);
    await client.close();
    await sluice.close();
    // Today: the inherited `Object` passes `registry()[name] !== undefined`, a tool "constructor"
    // is admitted into the Sluice catalog, and the client gets -32603.
    expect(exposed).not.toContain('constructor');
    expect(answer).toMatchObject({ code: -32602 });
  });

  it('discards the rest of an oversized stdio line instead of reading it as a message', async () => {
    const server = createServer({ name: 's', version: '1', logger: captureLogger().logger });
    server.tool(echo);
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines: string[] = [];
    let pending = '';
    stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      let i: number;
      while ((i = pending.indexOf('\n')) !== -1) {
        lines.push(pending.slice(0, i));
        pending = pending.slice(i + 1);
      }
    });
    const handle = await server.serveStdio({ stdin, stdout });
    // One line longer than the 10 MiB limit; its last bytes happen to look like a request.
    stdin.write(
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"${'a'.repeat(10 * 1024 * 1024 + 16)}`,
    );
    stdin.write('{"jsonrpc":"2.0","id":"tail","method":"ping"}\n');
    await sleep(300);
    await handle.close();
    await server.close();
    const answers = lines.map((l) => JSON.parse(l) as { id: unknown; error?: unknown; result?: unknown });
    // The oversized line is refused once; nothing of it is executed.
    expect(answers.filter((m) => m.id === 'tail')).toEqual([]);
    expect(answers).toHaveLength(1);
  });
});

describe('closing while tools are still being registered', () => {
  it('refuses a call that was waiting for registrations instead of running it after close()', async () => {
    let ran = false;
    const slowImport = definePlugin({
      name: 'slow-import',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.import.tapPromise('slow-import', async (batch) => (await new Promise((r) => setTimeout(r, 50)), batch)),
    });
    const server = createServer({ name: 's', version: '1', logger: captureLogger().logger, plugins: [slowImport] });
    server.tool({ name: 'late', handler: () => ((ran = true), { content: [] }) });
    const call = server.call('late');
    await server.close();
    await expect(call).rejects.toMatchObject({ code: CoreErrorCode.SERVER_CLOSED });
    expect(ran).toBe(false);
  });
});

describe('the memory store', () => {
  it('refuses a TTL that is not a finite number of milliseconds', async () => {
    const store = new MemoryStore();
    await expect(store.set('k', 1, { ttlMs: Number.NaN })).rejects.toThrow(RangeError);
    await expect(store.setIfAbsent('k', 1, { ttlMs: -1 })).rejects.toThrow(RangeError);
  });
});
