// One guard, written once, meets every request kind: the kit's request recorder against a gateway
// with a local tool and an upstream serving a resource, a template, a prompt and completions.
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer, ResourceNotFoundError, ResourceTemplate } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { CoreErrorCode, Stage, createServer, definePlugin, refusal } from '@sluice/core';
import type { GuardedKind, Plugin, PluginApi, SluiceServer } from '@sluice/core';
import { captureLogger, requestRecorder } from '@sluice/testing';
import type { RequestRecorderOptions } from '@sluice/testing';
import '../src/index.js'; // gives every server import()
import { rpcFailure } from '../../core/test/fixtures/upstream-helpers.js';

function filesUpstream(): McpServer {
  const mcp = new McpServer({ name: 'files', version: '1.0.0' });
  mcp.registerResource('readme', 'file:///public/readme', {}, (uri) => ({ contents: [{ uri: uri.href, text: 'hi' }] }));
  mcp.registerResource(
    'files',
    new ResourceTemplate('file:///{+path}', { list: undefined, complete: { path: () => ['public/readme'] } }),
    {},
    (uri) => ({ contents: [{ uri: uri.href, text: `content of ${uri.href}` }] }),
  );
  mcp.registerPrompt('greet', { argsSchema: z.object({ who: z.string() }) }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `hello ${who}` } }],
  }));
  return mcp;
}

let server: SluiceServer | undefined;
afterEach(() => server?.close());

async function gatewayWith(options: RequestRecorderOptions) {
  const recorder = requestRecorder(options);
  return { client: await gatewayOf([recorder.plugin]), seen: recorder.seen };
}

/** A gateway with a local tool and the upstream above (namespace `fs`), served in memory with these plugins. */
async function gatewayOf(plugins: Plugin[], logger = captureLogger().logger) {
  server = createServer({ name: 'gw', version: '1.0.0', logger, plugins });
  server.tool({ name: 'ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
  await server.import({ name: 'fs', namespace: 'fs', connection: { type: 'in-process', server: filesUpstream() } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'kinds', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

describe('a guard written once', () => {
  it('sees tool calls, reads (direct and through a template), prompt gets and completions, with their targets', async () => {
    const { client, seen } = await gatewayWith({});
    await client.callTool({ name: 'ping', arguments: {} });
    await client.readResource({ uri: 'file:///public/readme' });
    await client.readResource({ uri: 'FILE://localhost/etc/../etc/hosts' });
    await client.getPrompt({ name: 'fs_greet', arguments: { who: 'ann' } });
    await client.complete({
      ref: { type: 'ref/resource', uri: 'file:///{+path}' },
      argument: { name: 'path', value: '' },
    });
    expect(seen.map(({ kind, upstream, target }) => ({ kind, upstream, target }))).toEqual([
      { kind: 'tools/call', upstream: undefined, target: 'ping' },
      { kind: 'resources/read', upstream: 'fs', target: 'file:///public/readme' },
      { kind: 'resources/read', upstream: 'fs', target: 'file:///etc/hosts' },
      { kind: 'prompts/get', upstream: 'fs', target: 'fs_greet' },
      { kind: 'completion/complete', upstream: 'fs', target: 'file:///{+path}' },
    ]);
  });

  it('refuses every kind it is told to, with its code: a tool result for a call, a JSON-RPC error otherwise', async () => {
    const { client } = await gatewayWith({ refuse: () => true });
    const call = await client.callTool({ name: 'ping', arguments: {} });
    expect(call.isError).toBe(true);
    expect(JSON.stringify(call)).toContain('REFUSED_BY_RECORDER');
    await expect(client.readResource({ uri: 'file:///etc/hosts' })).rejects.toThrow(/REFUSED_BY_RECORDER/);
    await expect(client.getPrompt({ name: 'fs_greet', arguments: { who: 'x' } })).rejects.toThrow(
      /REFUSED_BY_RECORDER/,
    );
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'fs_greet' }, argument: { name: 'who', value: '' } }),
    ).rejects.toThrow(/REFUSED_BY_RECORDER/);
  });
});

describe('the one request path: request and response taps', () => {
  it('a response tap written once rewrites the answer of every kind, narrowed by ctx.kind', async () => {
    const kinds: string[] = [];
    const marker = definePlugin({
      name: 'marker',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.response.tap('marker', (answer, ctx) => {
          kinds.push(ctx.kind);
          return { ...(answer as object), _meta: { marked: ctx.kind } };
        }),
    });
    const client = await gatewayOf([marker]);
    expect((await client.callTool({ name: 'ping', arguments: {} }))._meta).toEqual({ marked: 'tools/call' });
    expect((await client.readResource({ uri: 'file:///etc/hosts' }))._meta).toEqual({ marked: 'resources/read' });
    expect((await client.getPrompt({ name: 'fs_greet', arguments: { who: 'a' } }))._meta).toEqual({
      marked: 'prompts/get',
    });
    const completed = await client.complete({
      ref: { type: 'ref/resource', uri: 'file:///{+path}' },
      argument: { name: 'path', value: '' },
    });
    expect(completed._meta).toEqual({ marked: 'completion/complete' });
    expect(kinds).toEqual(['tools/call', 'resources/read', 'prompts/get', 'completion/complete']);
  });

  it('a tap opts out per kind with `kinds`: requests of other kinds never reach it', async () => {
    const seen: string[] = [];
    const toolsOnly = definePlugin({
      name: 'tools-only',
      version: '1.0.0',
      apply: ({ hooks }) => {
        hooks.request.tap(
          { name: 'tools-only', kinds: ['tools/call'] },
          (ctx) => void seen.push(`request ${ctx.kind}`),
        );
        hooks.response.tap({ name: 'tools-only', kinds: ['resources/read'] }, (answer, ctx) => {
          seen.push(`response ${ctx.kind}`);
          return answer;
        });
      },
    });
    const client = await gatewayOf([toolsOnly]);
    await client.callTool({ name: 'ping', arguments: {} });
    await client.readResource({ uri: 'file:///etc/hosts' });
    await client.getPrompt({ name: 'fs_greet', arguments: { who: 'a' } });
    expect(seen).toEqual(['request tools/call', 'response resources/read']);
  });

  it('preCall and postCall are request and response for tool calls, in one order by stage', async () => {
    const order: string[] = [];
    const adapters = definePlugin({
      name: 'adapters',
      version: '1.0.0',
      apply: ({ hooks }) => {
        hooks.preCall.tap(
          { name: 'adapters', stage: Stage.FILTER },
          (ctx) => void order.push(`preCall ${ctx.tool.name}`),
        );
        hooks.postCall.tap({ name: 'adapters', stage: Stage.LAST }, (result) => (order.push('postCall'), result));
      },
    });
    const onePath = definePlugin({
      name: 'one-path',
      version: '1.0.0',
      apply: ({ hooks }) => {
        hooks.request.tap({ name: 'one-path', stage: Stage.FIRST }, (ctx) => void order.push(`request ${ctx.kind}`));
        hooks.request.tap({ name: 'one-path', stage: Stage.DEFAULT }, (ctx) => {
          order.push(`request late ${ctx.kind}`);
          return ctx.kind === 'tools/call' ? refusal({ code: 'LATE', message: 'refused late' }) : undefined;
        });
        hooks.response.tap({ name: 'one-path', stage: Stage.DEFAULT }, (answer) => (order.push('response'), answer));
      },
    });
    const client = await gatewayOf([adapters, onePath]);
    const refused = await client.callTool({ name: 'ping', arguments: {} });
    expect(JSON.stringify(refused)).toContain('LATE');
    // A refusal ends the request: no response tap sees it, and preCall (for tool calls only) sees no read.
    expect(order).toEqual(['request tools/call', 'preCall ping', 'request late tools/call']);
    order.length = 0;
    await client.readResource({ uri: 'file:///etc/hosts' });
    expect(order).toEqual(['request resources/read', 'request late resources/read', 'response']);
  });

  it('refuses a `kinds` that names no request kind, or on a hook that does not take it', () => {
    const tapping = (tap: (hooks: PluginApi['hooks']) => void) =>
      createServer({
        name: 'gw',
        version: '1.0.0',
        logger: captureLogger().logger,
        plugins: [definePlugin({ name: 'bad', version: '1.0.0', apply: ({ hooks }) => tap(hooks) })],
      });
    expect(() =>
      tapping((hooks) => hooks.request.tap({ name: 'bad', kinds: ['tools/list' as GuardedKind] }, () => undefined)),
    ).toThrow(/`kinds` that is not a list of tools\/call/);
    expect(() =>
      tapping((hooks) => hooks.preCall.tap({ name: 'bad', kinds: ['tools/call'] }, () => undefined)),
    ).toThrow(/only request and response taps take it/);
  });
});

describe('one place decides a request: featureAccess is lists, and an adapter over request', () => {
  /** Hides `file:///etc/hosts` and the prompt `fs_greet`, as plugins written for `featureAccess` did. */
  const hider = (seen: string[]) =>
    definePlugin({
      name: 'hider',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.featureAccess.tap({ name: 'hider', stage: Stage.FILTER }, (ctx) => {
          seen.push(`${ctx.method} ${ctx.target ?? ''}`);
          return ctx.target === 'file:///etc/hosts' || ctx.target === 'fs_greet' ? 'hidden' : undefined;
        }),
    });

  it('a request tap before it by stage sees the requests a featureAccess tap hides, which read as not found', async () => {
    const seen: string[] = [];
    const first = requestRecorder({ name: 'first' });
    // Both tap at FILTER: the recorder comes first by registration, ahead of the hider's request role.
    const client = await gatewayOf([first.plugin, hider(seen)]);
    const missing = await client.readResource({ uri: 'nope://nothing' }).then(
      () => expect.unreachable(),
      (error: unknown) => error as { code: number },
    );
    seen.length = 0;
    const hidden = await client.readResource({ uri: 'FILE://localhost/etc/hosts' }).then(
      () => expect.unreachable(),
      (error: unknown) => error as { code: number; message: string },
    );
    // Absent from the client's view: the same error as a resource no upstream has.
    expect(hidden.code).toBe(missing.code);
    expect(hidden.message).toContain('file:///etc/hosts');
    await expect(client.getPrompt({ name: 'fs_greet', arguments: { who: 'x' } })).rejects.toThrow(/not found/i);
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'fs_greet' }, argument: { name: 'who', value: '' } }),
    ).rejects.toThrow(/not found/i);
    // The adapter met each request on the one path, with the canonical URI.
    expect(seen).toEqual(['resources/read file:///etc/hosts', 'prompts/get fs_greet', 'completion/complete fs_greet']);
    expect(first.seen.map((r) => `${r.kind} ${r.target ?? ''}`)).toEqual([
      'resources/read nope://nothing',
      'resources/read file:///etc/hosts',
      'prompts/get fs_greet',
      'completion/complete fs_greet',
    ]);
    // Lists are still filtered item by item.
    seen.length = 0;
    expect((await client.listPrompts()).prompts).toEqual([]);
    expect(seen).toEqual(['prompts/list fs_greet']);
  });

  it('a request tap hides an item by refusing with NOT_FOUND: the client sees it as absent, not as refused', async () => {
    const hiding = definePlugin({
      name: 'hiding',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.request.tap({ name: 'hiding', kinds: ['resources/read', 'prompts/get'] }, () =>
          refusal({ code: CoreErrorCode.NOT_FOUND, message: 'hidden' }),
        ),
    });
    const client = await gatewayOf([hiding]);
    const read = await client.readResource({ uri: 'file:///public/readme' }).then(
      () => expect.unreachable(),
      (error: unknown) => error as { code: number; message: string },
    );
    // The error the handlers answer for a resource no upstream has.
    expect(read.code).toBe(new ResourceNotFoundError('x').code);
    expect(read.message).toMatch(/not found/i);
    expect(read.message).toContain('file:///public/readme');
    const prompt = await client.getPrompt({ name: 'fs_greet', arguments: { who: 'x' } }).then(
      () => expect.unreachable(),
      (error: unknown) => error as { code: number; message: string },
    );
    expect(prompt.code).toBe(-32602);
    expect(prompt.message).toMatch(/Prompt "fs_greet" not found/);
  });

  it('in audit mode, a featureAccess tap’s request refusals are log lines, as every request tap’s are', async () => {
    const captured = captureLogger();
    const auditing = definePlugin({
      name: 'auditing',
      version: '1.0.0',
      mode: 'audit',
      apply: ({ hooks }) =>
        hooks.featureAccess.tap('auditing', (ctx) => (ctx.target === 'fs_greet' ? 'hidden' : undefined)),
    });
    const client = await gatewayOf([auditing], captured.logger);
    const prompt = await client.getPrompt({ name: 'fs_greet', arguments: { who: 'ann' } });
    expect(JSON.stringify(prompt.messages)).toContain('hello ann');
    expect(captured.events('audit.refusal').map((r) => [r.plugin, r.kind, r.target, r.code] as unknown[])).toEqual([
      ['auditing', 'prompts/get', 'fs_greet', 'NOT_FOUND'],
    ]);
  });
});

describe('what a client of imported features receives when a plugin refuses or fails', () => {
  it('is the code, message and data it always got', async () => {
    const gate = definePlugin({
      name: 'gate',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.request.tap({ name: 'gate', kinds: ['resources/read', 'prompts/get', 'completion/complete'] }, (ctx) => {
          if (ctx.target === 'file:///sealed') return refusal({ code: 'SEALED', message: 'not for this caller' });
          if (ctx.target === 'file:///hidden') return refusal({ code: CoreErrorCode.NOT_FOUND, message: 'hidden' });
          if (ctx.kind === 'completion/complete') throw new Error('the secret token is hunter2');
          return undefined;
        }),
    });
    const client = await gatewayOf([gate]);
    const results = [
      await rpcFailure(client.readResource({ uri: 'file:///sealed' })),
      await rpcFailure(client.readResource({ uri: 'file:///hidden' })),
      await rpcFailure(client.readResource({ uri: 'no scheme at all' })),
      await rpcFailure(client.getPrompt({ name: 'fs_nothing' })),
      await rpcFailure(
        client.complete({ ref: { type: 'ref/prompt', name: 'fs_greet' }, argument: { name: 'who', value: '' } }),
      ),
    ];
    expect(results).toEqual([
      {
        code: -32600,
        message: 'SEALED: not for this caller',
        data: { code: 'SEALED', message: 'not for this caller', plugin: 'gate' },
      },
      { code: -32602, message: 'Resource not found: file:///hidden', data: { uri: 'file:///hidden' } },
      { code: -32602, message: 'A resource URI holds no spaces, control characters or backslashes', data: undefined },
      { code: -32602, message: 'Prompt "fs_nothing" not found', data: undefined },
      { code: -32603, message: 'Internal error in plugin "gate" (request)', data: { code: 'PLUGIN_FAILED' } },
    ]);
  });
});
