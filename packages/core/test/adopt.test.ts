import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as InMemoryV1 } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer as McpServerV2, InMemoryTransport } from '@modelcontextprotocol/server';
import { Client } from '@modelcontextprotocol/client';
import { CoreErrorCode, MemoryStore, Stage, adopt, definePlugin, refusal } from '@sluice/core';
import type { CallContext, Executor, Plugin } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '../../testing/src/index.js';

interface Trace {
  preCall: string[];
  wrapped: string[];
  settled: string[];
}

function guard(trace: Trace): Plugin {
  return definePlugin({
    name: 'guard',
    version: '1.0.0',
    apply: ({ hooks }) => {
      hooks.preCall.tap({ name: 'guard', stage: Stage.RISK }, (ctx) => {
        trace.preCall.push(ctx.tool.name);
        return ctx.arguments.amount === 999
          ? refusal({ code: 'TOO_MUCH', message: 'amount over the limit' })
          : undefined;
      });
      hooks.execute.tap('guard', (next: Executor, tool) =>
        tool.name === 'refund'
          ? async (ctx: CallContext) => {
              trace.wrapped.push(tool.name);
              return next(ctx);
            }
          : next,
      );
      hooks.settled.tap('guard', (ctx, outcome) => void trace.settled.push(`${ctx.tool.name}:${outcome.status}`));
      hooks.listTools.tap('guard', (tools) => tools.filter((t) => t.name !== 'hidden'));
    },
  });
}

type Call = (
  name: string,
  args: Record<string, unknown>,
) => Promise<{ content: unknown[]; isError?: boolean; _meta?: Record<string, unknown> }>;

async function exercise(call: Call, list: () => Promise<string[]>, trace: Trace) {
  expect(await list()).toEqual(['refund', 'lookup']);
  const ok = await call('refund', { amount: 5 });
  expect(textOf(ok as never)).toBe('refunded 5');
  const refused = await call('refund', { amount: 999 });
  expect(refused.isError).toBe(true);
  expect(errorOf(refused as never)?.code).toBe('TOO_MUCH');
  expect(textOf((await call('lookup', { id: 'a' })) as never)).toBe('found a');
  expect(trace.preCall).toEqual(['refund', 'refund', 'lookup']);
  expect(trace.wrapped).toEqual(['refund']);
  expect(trace.settled).toEqual(['refund:ok', 'refund:refused', 'lookup:ok']);
}

describe('adopt()', () => {
  it('puts the pipeline in front of a v1 McpServer without changing its clients', async () => {
    const trace: Trace = { preCall: [], wrapped: [], settled: [] };
    const server = new McpServerV1({ name: 'legacy-app', version: '1.0.0' });
    server.registerTool('refund', { inputSchema: { amount: z.number() } }, async ({ amount }) => ({
      content: [{ type: 'text', text: `refunded ${amount}` }],
    }));
    const sluice = adopt(server, [guard(trace)], { logger: captureLogger().logger });
    // A tool registered after adopt() is guarded too.
    server.registerTool('lookup', { inputSchema: { id: z.string() } }, async ({ id }) => ({
      content: [{ type: 'text', text: `found ${id}` }],
    }));
    server.registerTool('hidden', {}, async () => ({ content: [{ type: 'text', text: 'secret' }] }));

    const [a, b] = InMemoryV1.createLinkedPair();
    await server.connect(b);
    const client = new ClientV1({ name: 'c', version: '1' });
    await client.connect(a);
    await exercise(
      (name, args) => client.callTool({ name, arguments: args }) as never,
      async () => (await client.listTools()).tools.map((t) => t.name),
      trace,
    );
    // The server's own validation still answers bad arguments.
    const bad = await client.callTool({ name: 'refund', arguments: { amount: 'lots' } });
    expect(bad.isError).toBe(true);
    await client.close();
    await sluice.close();
  });

  it('puts the pipeline in front of a v2 McpServer without changing its clients', async () => {
    const trace: Trace = { preCall: [], wrapped: [], settled: [] };
    const server = new McpServerV2({ name: 'modern-app', version: '1.0.0' });
    server.registerTool('refund', { inputSchema: z.object({ amount: z.number() }) }, async ({ amount }) => ({
      content: [{ type: 'text', text: `refunded ${amount}` }],
    }));
    server.registerTool('lookup', { inputSchema: z.object({ id: z.string() }) }, async ({ id }) => ({
      content: [{ type: 'text', text: `found ${id}` }],
    }));
    server.registerTool('hidden', {}, async () => ({ content: [{ type: 'text', text: 'secret' }] }));
    const sluice = adopt(server, [guard(trace)], { logger: captureLogger().logger });

    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(a);
    await exercise(
      (name, args) => client.callTool({ name, arguments: args }),
      async () => (await client.listTools()).tools.map((t) => t.name),
      trace,
    );
    await expect(client.callTool({ name: 'missing', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await client.close();
    await sluice.close();
  });

  it('refuses a second adoption of the same server and anything that is not an McpServer', () => {
    const server = new McpServerV2({ name: 'x', version: '1' });
    adopt(server, [], { logger: captureLogger().logger });
    expect(() => adopt(server, [], { logger: captureLogger().logger })).toThrow(/already adopted/);
    expect(() => adopt({ server: {} }, [])).toThrow(
      expect.objectContaining({ code: CoreErrorCode.INVALID_STATE }) as unknown,
    );
  });
});

describe('the store of an adopted server', () => {
  const bare = () => new McpServerV1({ name: 'bare', version: '1.0.0' });

  it('is one in-memory store per process when none is given, so servers built per request share their limits', async () => {
    const first = adopt(bare(), []);
    const second = adopt(bare(), []);
    expect(second.services.store).toBe(first.services.store);
    await first.close();
    // Closing an adopted server leaves the shared store to the others.
    await second.services.store.set('still', 1);
    expect(await second.services.store.get('still')).toBe(1);
    await second.close();
  });

  it('is the store given, when one is', async () => {
    const store = new MemoryStore();
    const shared = adopt(bare(), []);
    const own = adopt(bare(), [], { store });
    expect(own.services.store).toBe(store);
    expect(own.services.store).not.toBe(shared.services.store);
    await own.close();
    await shared.close();
  });
});

describe('what adopting one guard into a v1 server loads', () => {
  it('none of the SDK v2 packages, nor the HTTP adapter, while calls pass, are refused and fail', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-loads-'));
    try {
      const loads = join(dir, 'loads.txt');
      const run = spawnSync(
        process.execPath,
        [
          '--conditions=sluice:source',
          '--import',
          'tsx',
          '--import',
          fileURLToPath(new URL('./fixtures/record-loads.mjs', import.meta.url)),
          fileURLToPath(new URL('./fixtures/adopt-v1-guard.ts', import.meta.url)),
        ],
        { env: { ...process.env, SLUICE_LOADS_FILE: loads }, encoding: 'utf8', timeout: 60_000 },
      );
      expect(run.stderr).toBe('');
      const { passed, refused, read, errors } = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(passed).toMatchObject({ content: [{ type: 'text', text: 'sunny in Oslo' }] });
      expect(refused).toMatchObject({ isError: true, _meta: { 'dev.sluice/error': { code: 'NO_SUCH_CITY' } } });
      expect(read).toMatchObject({ contents: [{ uri: 'docs://readme', text: 'read me' }] });
      // What the client gets of each failure, as the server sent it: the same as when core built the SDK's errors.
      expect(errors).toEqual([
        { code: -32602, message: 'city must name a place', data: { code: 'INVALID_PARAMS' } },
        { code: -32603, message: 'Internal error in plugin "buggy" (preCall)', data: { code: 'PLUGIN_FAILED' } },
        {
          code: -32600,
          message: 'SEALED: not for this caller',
          data: { code: 'SEALED', message: 'not for this caller', plugin: 'gate' },
        },
        { code: -32602, message: 'Resource not found: docs://hidden', data: { uri: 'docs://hidden' } },
        { code: -32602, message: 'Prompt "internal" not found' },
        { code: -32602, message: 'A resource URI holds no spaces, control characters or backslashes' },
      ]);
      const loaded = readFileSync(loads, 'utf8').split('\n');
      // The record does see the packages that load: the v1 SDK, and core's own modules.
      expect(loaded.some((url) => url.includes('/@modelcontextprotocol/sdk/'))).toBe(true);
      expect(loaded.some((url) => url.endsWith('/core/src/adopt.ts'))).toBe(true);
      const heavy = loaded.filter((url) =>
        /\/(@modelcontextprotocol\/(server|client|node|core)|hono|@hono)\//.test(url),
      );
      expect(heavy).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
