// A feature request's `_meta`, both ways: what the client sent is the request context's `meta` (read as a tool
// call's is), and what `request` taps write to `outgoingMeta` is the `_meta` of the request the gateway relays.
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, definePlugin } from '@sluice/core';
import type { GuardedKind, Plugin, RequestContext, SluiceServer } from '@sluice/core';
import { sendRequest } from '@sluice/core/internal';
import { captureLogger } from '@sluice/testing';
import '../src/index.js';
import { FeatureCatalog } from '../src/features/catalog.js';
import type { FeatureLink } from '../src/features/catalog.js';
import { serveFeatures } from '../src/features/sdk-handlers.js';
import { connectClient, rpcFailure } from '../../core/test/fixtures/upstream-helpers.js';

/** An upstream with a resource, a prompt, completions and subscriptions, recording the `_meta` of each request. */
function recordingUpstream() {
  const received: { method: string; meta: unknown }[] = [];
  const record = (method: string, params: { _meta?: unknown } | undefined) =>
    void received.push({ method, meta: params?._meta });
  const server = new Server(
    { name: 'files', version: '1.0.0' },
    { capabilities: { resources: { subscribe: true }, prompts: {}, completions: {} } },
  );
  server.setRequestHandler('resources/list', () => ({ resources: [{ uri: 'file:///readme', name: 'readme' }] }));
  server.setRequestHandler('resources/templates/list', () => ({
    resourceTemplates: [{ uriTemplate: 'file:///docs/{name}', name: 'docs' }],
  }));
  server.setRequestHandler('prompts/list', () => ({ prompts: [{ name: 'greet' }] }));
  server.setRequestHandler('resources/read', (request) => {
    record('resources/read', request.params);
    return { contents: [{ uri: request.params.uri, text: 'hi' }] };
  });
  server.setRequestHandler('prompts/get', (request) => {
    record('prompts/get', request.params);
    return { messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }] };
  });
  server.setRequestHandler('completion/complete', (request) => {
    record(`completion/complete ${request.params.ref.type}`, request.params);
    return { completion: { values: [] } };
  });
  server.setRequestHandler('resources/subscribe', (request) => {
    record('resources/subscribe', request.params);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', (request) => {
    record('resources/unsubscribe', request.params);
    return {};
  });
  return { server, received };
}

let gateway: SluiceServer | undefined;
afterEach(() => gateway?.close());

/** A gateway importing the recording upstream, served in memory to a client, with these plugins. */
async function gatewayWith(plugins: Plugin[]) {
  const upstream = recordingUpstream();
  gateway = createServer({ name: 'gw', version: '1.0.0', logger: captureLogger().logger, plugins });
  await gateway.import({ name: 'fs', connection: { type: 'in-process', server: upstream.server } });
  const { client } = await connectClient(gateway);
  return { client, received: upstream.received };
}

/** A plugin whose `request` tap (every kind) records each context and writes to its `outgoingMeta`. */
function writer(write: (ctx: RequestContext) => Record<string, unknown>) {
  const seen: RequestContext[] = [];
  const plugin = definePlugin({
    name: 'writer',
    version: '1.0.0',
    apply: ({ hooks }) =>
      hooks.request.tap('writer', (ctx) => {
        seen.push(ctx);
        Object.assign(ctx.outgoingMeta, write(ctx));
        return undefined;
      }),
  });
  return { plugin, seen };
}

/** Every relayed kind, made once by the client with `meta` as its `_meta`. */
async function everyKind(client: Awaited<ReturnType<typeof gatewayWith>>['client'], meta?: Record<string, unknown>) {
  const _meta = meta === undefined ? {} : { _meta: meta };
  await client.readResource({ uri: 'file:///readme', ..._meta });
  await client.getPrompt({ name: 'greet', ..._meta });
  await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: '' }, ..._meta });
  await client.complete({
    ref: { type: 'ref/resource', uri: 'file:///docs/{name}' },
    argument: { name: 'name', value: '' },
    ..._meta,
  });
  await client.subscribeResource({ uri: 'file:///readme', ..._meta });
  await client.unsubscribeResource({ uri: 'file:///readme', ..._meta });
}

const RELAYED = [
  'resources/read',
  'prompts/get',
  'completion/complete ref/prompt',
  'completion/complete ref/resource',
  'resources/subscribe',
  'resources/unsubscribe',
];

describe("a request tap's outgoingMeta on a feature request", () => {
  it('reaches the upstream as the _meta of every relayed kind: read, prompt get, completions, (un)subscribe', async () => {
    const { plugin } = writer((ctx) => ({ 'test/kind': ctx.kind, 'test/target': ctx.target }));
    const { client, received } = await gatewayWith([plugin]);
    await everyKind(client);
    expect(received.map((r) => r.method)).toEqual(RELAYED);
    expect(received.map((r) => r.meta)).toEqual([
      { 'test/kind': 'resources/read', 'test/target': 'file:///readme' },
      { 'test/kind': 'prompts/get', 'test/target': 'greet' },
      { 'test/kind': 'completion/complete', 'test/target': 'greet' },
      { 'test/kind': 'completion/complete', 'test/target': 'file:///docs/{name}' },
      { 'test/kind': 'resources/subscribe', 'test/target': 'file:///readme' },
      { 'test/kind': 'resources/unsubscribe', 'test/target': 'file:///readme' },
    ]);
  });

  it('sends no _meta when no tap wrote one, and never relays the client _meta as it came (completions neither)', async () => {
    const { plugin } = writer(() => ({}));
    const { client, received } = await gatewayWith([plugin]);
    await everyKind(client, { 'client/key': 'from the client', progressToken: 7 });
    expect(received.map((r) => r.method)).toEqual(RELAYED);
    expect(received.map((r) => r.meta)).toEqual(RELAYED.map(() => undefined));
  });

  it('sends no _meta with no hook tapped at all, where no request context is built', async () => {
    const { client, received } = await gatewayWith([]);
    await everyKind(client, { 'client/key': 'from the client' });
    expect(received.map((r) => r.meta)).toEqual(RELAYED.map(() => undefined));
  });

  it('passes on only what a tap chose to of the incoming _meta', async () => {
    const { plugin } = writer((ctx) => ({ 'test/echo': ctx.meta['client/key'] }));
    const { client, received } = await gatewayWith([plugin]);
    await everyKind(client, { 'client/key': 'chosen', 'client/other': 'dropped' });
    expect(received.map((r) => r.meta)).toEqual(RELAYED.map(() => ({ 'test/echo': 'chosen' })));
  });
});

describe("a feature request's incoming _meta", () => {
  it('is on the request context of every kind, prototype-free, as the client sent it', async () => {
    const { plugin, seen } = writer(() => ({}));
    const { client } = await gatewayWith([plugin]);
    await everyKind(client, JSON.parse('{"client/key":"v","__proto__":{"polluted":true}}') as Record<string, unknown>);
    const kinds: GuardedKind[] = seen.map((ctx) => ctx.kind);
    expect(kinds).toEqual([
      'resources/read',
      'prompts/get',
      'completion/complete',
      'completion/complete',
      'resources/subscribe',
      'resources/unsubscribe',
    ]);
    for (const ctx of seen) {
      expect(Object.getPrototypeOf(ctx.meta)).toBe(null);
      expect({ ...ctx.meta }).toEqual({ 'client/key': 'v' });
      expect(Object.keys(ctx.outgoingMeta)).toEqual([]);
    }
  });

  it('is an empty object when the client sent none', async () => {
    const { plugin, seen } = writer(() => ({}));
    const { client } = await gatewayWith([plugin]);
    await client.readResource({ uri: 'file:///readme' });
    expect(Object.keys(seen[0]!.meta)).toEqual([]);
  });

  it('is bounded as a tool call _meta: too many keys, or nested too deep, is -32602 before any tap runs', async () => {
    const { plugin, seen } = writer(() => ({}));
    const { client, received } = await gatewayWith([plugin]);
    const wide = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, i]));
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) deep = { d: deep };
    for (const _meta of [wide, deep]) {
      const refused = await rpcFailure(client.readResource({ uri: 'file:///readme', _meta }));
      expect(refused.code).toBe(-32602);
      expect(String(refused.message)).toContain('_meta');
    }
    expect(seen).toEqual([]);
    expect(received).toEqual([]);
  });
});

describe("a request tap's outgoingMeta on a caller's own connection", () => {
  it('is the _meta of the request relayed on it (token_exchange, per_user), never on the shared connection', async () => {
    const logger = captureLogger().logger;
    const upstream = recordingUpstream();
    const [ownSide, upstreamSide] = InMemoryTransport.createLinkedPair();
    await upstream.server.connect(upstreamSide);
    const own = new Client({ name: 'own', version: '1.0.0' });
    await own.connect(ownSide);
    const callers: unknown[] = [];
    const link: FeatureLink = {
      name: 'saas',
      timeoutMs: 10_000,
      // No shared connection: only the caller's own can carry the request.
      connected: () => undefined,
      redact: (text) => text,
      callerClient: (caller) => (callers.push(caller), Promise.resolve(own)),
    };
    const catalog = new FeatureCatalog(() => {}, logger);
    await catalog.update(link, {
      capabilities: { resources: {} },
      resources: [{ uri: 'saas://doc', name: 'doc' }],
      templates: [],
      prompts: [],
      exposedName: (name) => name,
      source: { kind: 'upstream', upstream: 'saas', trusted: false },
    });
    const sdk = new Server({ name: 'gw', version: '1.0.0' }, { capabilities: {} });
    serveFeatures(sdk, {
      catalog,
      logger,
      transport: 'in-process',
      guards: {
        plan: () => (ctx) => {
          ctx.outgoingMeta['test/kind'] = ctx.kind;
          return sendRequest(ctx);
        },
      },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await sdk.connect(serverSide);
    const client = new Client({ name: 'caller', version: '1.0.0' });
    await client.connect(clientSide);
    await client.readResource({ uri: 'saas://doc', _meta: { 'client/key': 'not relayed' } });
    expect(callers).toHaveLength(1);
    expect(upstream.received).toEqual([{ method: 'resources/read', meta: { 'test/kind': 'resources/read' } }]);
    await Promise.all([client.close(), own.close()]);
  });
});
