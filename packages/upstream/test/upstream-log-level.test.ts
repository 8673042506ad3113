import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { createServer, definePlugin, refusal, CoreErrorCode } from '@sluice/core';
import type { Plugin, RequestContext, SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { setSessionLevel } from '@sluice/core/internal';
import '../src/index.js'; // gives every server import()

// A client's logging/setLevel through a gateway: it reaches the upstream, and the gateway relays only what the
// client asked for, as the upstream would directly. It is a guarded request like any other: it runs the request
// path once per upstream that logs, and only the upstreams that admit it are set.

/** An upstream with logging whose `say` logs one line at each of two levels, and which records the levels it was set to. */
function loggingUpstream(levels: string[]): McpServer {
  const server = new McpServer({ name: 'logs', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.server.setRequestHandler('logging/setLevel', (request) => {
    levels.push(request.params.level);
    return {};
  });
  server.registerTool('say', {}, async (ctx) => {
    await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'debug', data: 'chatter' } });
    await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'error', data: 'trouble' } });
    return { content: [{ type: 'text', text: 'said' }] };
  });
  return server;
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
// In-process clients have no session id: the level they set is kept for every in-process session of the process.
// Put back one that lets every line through, as no level does, for the files that run after this one.
afterAll(() => setSessionLevel(undefined, 'debug'));

describe('logging/setLevel through a gateway', () => {
  it('reaches the upstream, and the client gets only messages at or above its level', async () => {
    const levels: string[] = [];
    const capture = captureLogger();
    const gateway: SluiceServer = createServer({ name: 'gateway', version: '1.0.0', logger: capture.logger });
    cleanup.push(() => gateway.close());
    await gateway.import({
      name: 'logs',
      namespace: 'logs',
      connection: { type: 'in-process', server: loggingUpstream(levels) },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await gateway.connect(serverSide);
    const client = new Client({ name: 'c', version: '1.0.0' });
    const received: unknown[] = [];
    client.setNotificationHandler('notifications/message', (n) => void received.push(n.params.data));
    await client.connect(clientSide);
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
    await client.setLoggingLevel('error');
    await client.callTool({ name: 'logs_say', arguments: {} });
    expect(received).toEqual(['trouble']);
    expect(levels).toContain('error');
    expect(capture.records.some((record) => record.event === 'gateway.feature_shadowed')).toBe(false);
    await client.close();
  });
});

/** A plugin whose `request` tap sees every `logging/setLevel` (recorded), and answers it with `answer`. */
function levelGate(seen: string[], answer: (ctx: RequestContext) => ReturnType<typeof refusal> | undefined): Plugin {
  return definePlugin({
    name: 'level-gate',
    version: '1.0.0',
    apply({ hooks }) {
      hooks.request.tap({ name: 'level-gate', kinds: ['logging/setLevel'] }, (ctx) => {
        seen.push(`${ctx.kind} ${ctx.upstream ?? '-'} ${ctx.target ?? '-'}`);
        return answer(ctx);
      });
    },
  });
}

/** A gateway over two logging upstreams `a` and `b`, with `plugins`, and a client of it. */
async function twoUpstreams(plugins: Plugin[]) {
  const levels = { a: [] as string[], b: [] as string[] };
  const gateway = createServer({ name: 'gateway', version: '1.0.0', plugins, logger: captureLogger().logger });
  cleanup.push(() => gateway.close());
  for (const name of ['a', 'b'] as const)
    await gateway.import({
      name,
      namespace: name,
      connection: { type: 'in-process', server: loggingUpstream(levels[name]) },
    });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(serverSide);
  const client = new Client({ name: 'c', version: '1.0.0' });
  const received: unknown[] = [];
  client.setNotificationHandler('notifications/message', (n) => void received.push(n.params.data));
  await client.connect(clientSide);
  cleanup.push(() => client.close());
  return { levels, client, received };
}

describe('logging/setLevel is a guarded request', () => {
  it('runs the request path once per upstream that logs, and sets only the upstreams that admit it', async () => {
    const seen: string[] = [];
    const { levels, client } = await twoUpstreams([
      levelGate(seen, (ctx) => (ctx.upstream === 'b' ? refusal({ code: 'NOPE', message: 'not b' }) : undefined)),
    ]);
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
    await client.setLoggingLevel('error');
    expect(seen.sort()).toEqual(['logging/setLevel a error', 'logging/setLevel b error']);
    // A call of each upstream after the level: an upstream that was sent a level has it by the time it answers.
    await client.callTool({ name: 'a_say', arguments: {} });
    await client.callTool({ name: 'b_say', arguments: {} });
    expect(levels).toEqual({ a: ['error'], b: [] });
  });

  it("refused by every upstream, answers the refusal and changes neither an upstream's level nor the client's", async () => {
    const seen: string[] = [];
    const { levels, client, received } = await twoUpstreams([
      levelGate(seen, (ctx) => (ctx.target === 'debug' ? refusal({ code: 'NOPE', message: 'not debug' }) : undefined)),
    ]);
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
    await client.setLoggingLevel('error');
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- as above
    await expect(client.setLoggingLevel('debug')).rejects.toMatchObject({
      code: -32600,
      message: 'NOPE: not debug',
      data: { code: 'NOPE', plugin: 'level-gate' },
    });
    // The upstream says both lines; the client still hears only what its level, still `error`, lets through.
    await client.callTool({ name: 'a_say', arguments: {} });
    await client.callTool({ name: 'b_say', arguments: {} });
    expect(received).toEqual(['trouble', 'trouble']);
    expect(levels).toEqual({ a: ['error'], b: ['error'] });
  });

  it("leaves out an upstream a tap hides (NOT_FOUND), as one that does not log: with all hidden, the level is the client's own", async () => {
    const { levels, client, received } = await twoUpstreams([
      levelGate([], () => refusal({ code: CoreErrorCode.NOT_FOUND, message: 'hidden' })),
    ]);
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
    await client.setLoggingLevel('error');
    await client.callTool({ name: 'a_say', arguments: {} });
    expect(received).toEqual(['trouble']);
    expect(levels).toEqual({ a: [], b: [] });
  });
});
