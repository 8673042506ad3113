import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  McpServer as McpServerV1,
  ResourceTemplate as ResourceTemplateV1,
} from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as InMemoryV1 } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  McpServer as McpServerV2,
  InMemoryTransport,
  ResourceTemplate as ResourceTemplateV2,
} from '@modelcontextprotocol/server';
import { Client } from '@modelcontextprotocol/client';
import { adopt, definePlugin } from '@sluice/core';
import type { FeatureContext, Plugin } from '@sluice/core';
import { captureLogger, requestRecorder } from '../../testing/src/index.js';

// The feature hooks on an adopted server's own resources and prompts, on a real v1 and a real v2 McpServer.

const SECRET = 'docs://secret';
const HIDDEN_PROMPT = 'internal';

interface Gate {
  /** Every request the access hook saw. */
  seen: FeatureContext[];
  /** While set, the gate refuses everything (lists come back empty). */
  closed: boolean;
}

/** Refuses the secret resource and the internal prompt, and marks every read and prompt answer. */
function gate(state: Gate): Plugin {
  return definePlugin({
    name: 'gate',
    version: '1.0.0',
    apply: ({ hooks }) => {
      hooks.featureAccess.tap('gate', (ctx) => {
        state.seen.push(ctx);
        if (state.closed) return 'closed';
        return ctx.target === SECRET || ctx.target === HIDDEN_PROMPT ? 'not for this caller' : undefined;
      });
      hooks.featureResult.tap('gate', (answer) =>
        answer.method === 'resources/read'
          ? {
              method: answer.method,
              result: {
                ...answer.result,
                contents: answer.result.contents.map((c) => ({ ...c, _meta: { gated: true } })),
              },
            }
          : { method: answer.method, result: { ...answer.result, description: 'gated' } },
      );
    },
  });
}

/** What a test needs of either SDK's client. */
interface AnyClient {
  listResources(): Promise<{ resources: { uri: string }[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: { uri: string; _meta?: unknown }[] }>;
  listPrompts(): Promise<{ prompts: { name: string }[] }>;
  getPrompt(params: {
    name: string;
    arguments?: Record<string, string>;
  }): Promise<{ description?: string; messages: unknown[] }>;
  complete(params: {
    ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
    argument: { name: string; value: string };
  }): Promise<{ completion: { values: string[] } }>;
  close(): Promise<void>;
}

/** The same resources, template and prompts on either SDK. */
function registerV1(server: McpServerV1): void {
  const text = (uri: URL, body: string) => ({ contents: [{ uri: uri.href, text: body }] });
  server.registerResource('readme', 'docs://readme', {}, (uri) => text(uri, 'read me'));
  server.registerResource('secret', SECRET, {}, (uri) => text(uri, 'the plans'));
  server.registerResource(
    'page',
    new ResourceTemplateV1('docs://page/{n}', { list: undefined, complete: { n: () => ['1', '2'] } }),
    {},
    (uri) => text(uri, `page ${uri.pathname}`),
  );
  server.registerPrompt('greet', { argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `hello ${who}` } }],
  }));
  server.registerPrompt(HIDDEN_PROMPT, {}, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'internal' } }],
  }));
}

function registerV2(server: McpServerV2): void {
  const text = (uri: URL, body: string) => ({ contents: [{ uri: uri.href, text: body }] });
  server.registerResource('readme', 'docs://readme', {}, (uri) => text(uri, 'read me'));
  server.registerResource('secret', SECRET, {}, (uri) => text(uri, 'the plans'));
  server.registerResource(
    'page',
    new ResourceTemplateV2('docs://page/{n}', { list: undefined, complete: { n: () => ['1', '2'] } }),
    {},
    (uri) => text(uri, `page ${uri.pathname}`),
  );
  server.registerPrompt('greet', { argsSchema: z.object({ who: z.string() }) }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `hello ${who}` } }],
  }));
  server.registerPrompt(HIDDEN_PROMPT, {}, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'internal' } }],
  }));
}

async function connectV1(server: McpServerV1): Promise<AnyClient> {
  const [a, b] = InMemoryV1.createLinkedPair();
  await server.connect(b);
  const client = new ClientV1({ name: 'c', version: '1' });
  await client.connect(a);
  return client;
}

async function connectV2(server: McpServerV2): Promise<AnyClient> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'c', version: '1' });
  await client.connect(a);
  return client;
}

const failure = (request: Promise<unknown>): Promise<{ code: number; message: string }> =>
  request.then(
    () => expect.unreachable('the request was answered'),
    (error: unknown) => error as { code: number; message: string },
  );

async function guardsResourcesAndPrompts(client: AnyClient, state: Gate): Promise<void> {
  expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['docs://readme', SECRET]);
  const read = await client.readResource({ uri: 'docs://readme' });
  expect(read.contents).toEqual([{ uri: 'docs://readme', text: 'read me', _meta: { gated: true } }]);
  expect((await client.readResource({ uri: 'docs://page/7' })).contents[0]?._meta).toEqual({ gated: true });

  // A refused URI reads as one the server does not have.
  const unknown = await failure(client.readResource({ uri: 'docs://nothing-here' }));
  const refused = await failure(client.readResource({ uri: SECRET }));
  expect(refused.code).toBe(unknown.code);
  expect(refused.message).toContain(SECRET);

  const greeting = await client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
  expect(greeting).toMatchObject({ description: 'gated', messages: [{ content: { text: 'hello Ada' } }] });
  expect((await failure(client.getPrompt({ name: HIDDEN_PROMPT }))).code).toBe(-32602);
  expect(
    (
      await failure(
        client.complete({ ref: { type: 'ref/prompt', name: HIDDEN_PROMPT }, argument: { name: 'x', value: '' } }),
      )
    ).code,
  ).toBe(-32602);
  const pages = await client.complete({
    ref: { type: 'ref/resource', uri: 'docs://page/{n}' },
    argument: { name: 'n', value: '' },
  });
  expect(pages.completion.values).toEqual(['1', '2']);

  // The hook saw the adopted server's own requests: they belong to no upstream.
  const seen = state.seen.map((ctx) => [ctx.method, ctx.target, ctx.upstream, ctx.transport]);
  expect(seen).toContainEqual(['resources/read', SECRET, undefined, 'in-process']);
  expect(seen).toContainEqual(['prompts/get', 'greet', undefined, 'in-process']);

  state.closed = true;
  expect((await client.listResources()).resources).toEqual([]);
  expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
  expect((await client.listPrompts()).prompts).toEqual([]);
  expect((await failure(client.readResource({ uri: 'docs://readme' }))).code).toBe(unknown.code);
  state.closed = false;
  expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet', HIDDEN_PROMPT]);
}

describe('adopt() on resources and prompts', () => {
  it('refuses, hides and rewrites a v1 McpServer’s own resources and prompts through the feature hooks', async () => {
    const state: Gate = { seen: [], closed: false };
    const server = new McpServerV1({ name: 'legacy-app', version: '1.0.0' });
    // Registered after adopt(): the SDK installs its handlers on the first registration, and those are guarded too.
    const sluice = adopt(server, [gate(state)], { logger: captureLogger().logger });
    registerV1(server);
    const client = await connectV1(server);
    await guardsResourcesAndPrompts(client, state);
    await client.close();
    await sluice.close();
  });

  it('refuses, hides and rewrites a v2 McpServer’s own resources and prompts through the feature hooks', async () => {
    const state: Gate = { seen: [], closed: false };
    const server = new McpServerV2({ name: 'modern-app', version: '1.0.0' });
    registerV2(server);
    const sluice = adopt(server, [gate(state)], { logger: captureLogger().logger });
    const client = await connectV2(server);
    await guardsResourcesAndPrompts(client, state);
    await client.close();
    await sluice.close();
  });

  it('runs an adopted server’s own reads, prompt gets and completions through the guard hook, v1 and v2', async () => {
    for (const version of ['v1', 'v2'] as const) {
      const recorder = requestRecorder({ refuse: (r) => r.target === SECRET });
      let client: AnyClient;
      let sluice: { close(): Promise<void> };
      if (version === 'v1') {
        const server = new McpServerV1({ name: 'legacy-app', version: '1.0.0' });
        sluice = adopt(server, [recorder.plugin], { logger: captureLogger().logger });
        registerV1(server);
        client = await connectV1(server);
      } else {
        const server = new McpServerV2({ name: 'modern-app', version: '1.0.0' });
        registerV2(server);
        sluice = adopt(server, [recorder.plugin], { logger: captureLogger().logger });
        client = await connectV2(server);
      }
      await client.readResource({ uri: 'docs://readme' });
      expect((await failure(client.readResource({ uri: SECRET }))).message).toContain('REFUSED_BY_RECORDER');
      await client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
      await client.complete({
        ref: { type: 'ref/resource', uri: 'docs://page/{n}' },
        argument: { name: 'n', value: '' },
      });
      expect(recorder.seen.map((r) => [r.kind, r.target, r.upstream])).toEqual([
        ['resources/read', 'docs://readme', undefined],
        ['resources/read', SECRET, undefined],
        ['prompts/get', 'greet', undefined],
        ['completion/complete', 'docs://page/{n}', undefined],
      ]);
      await client.close();
      await sluice.close();
    }
  });

  it('leaves the server’s resource and prompt handlers as they were when no plugin taps the feature hooks', () => {
    const server = new McpServerV2({ name: 'x', version: '1' });
    registerV2(server);
    const handlers = (server.server as unknown as { _requestHandlers: Map<string, unknown> })._requestHandlers;
    const before = new Map(handlers);
    adopt(server, [], { logger: captureLogger().logger });
    for (const method of ['resources/list', 'resources/read', 'prompts/get', 'completion/complete']) {
      expect(before.get(method), method).toBeDefined();
      expect(handlers.get(method), method).toBe(before.get(method));
    }
  });
});

describe('an adopted server’s own feature requests', () => {
  it('hand the request’s own _meta to the request taps (a loop guard extends the stack it came with), v1 and v2', async () => {
    for (const version of ['v1', 'v2'] as const) {
      const metas: unknown[] = [];
      const plugin = definePlugin({
        name: 'meta-reader',
        version: '1.0.0',
        apply: ({ hooks }) => {
          hooks.request.tap({ name: 'meta-reader', kinds: ['resources/read', 'prompts/get'] }, (ctx) => {
            metas.push(ctx.meta);
            return undefined;
          });
        },
      });
      let client: AnyClient;
      let sluice: { close(): Promise<void> };
      if (version === 'v1') {
        const server = new McpServerV1({ name: 'legacy-app', version: '1.0.0' });
        sluice = adopt(server, [plugin], { logger: captureLogger().logger });
        registerV1(server);
        client = await connectV1(server);
      } else {
        const server = new McpServerV2({ name: 'modern-app', version: '1.0.0' });
        registerV2(server);
        sluice = adopt(server, [plugin], { logger: captureLogger().logger });
        client = await connectV2(server);
      }
      await client.readResource({ uri: 'docs://readme', _meta: { trail: ['elsewhere'] } } as { uri: string });
      await client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
      expect(metas, version).toEqual([{ trail: ['elsewhere'] }, {}]);
      await client.close();
      await sluice.close();
    }
  });
});
