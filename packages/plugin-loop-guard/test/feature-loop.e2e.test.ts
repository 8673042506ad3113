// Two real gateways over loopback HTTP that import each other, each with the loop guard. Each one's only
// upstream with resources is the other, so the catalog routes a URI neither of them serves to the other
// (the single-upstream fallback), which routes it back: one client read would bounce between them until a
// timeout. The guard must end it at the first repeat, with LOOP_DETECTED, as a JSON-RPC error.
//
// How two gateways come to import each other with resources on both sides: B starts life as a plain
// resource server on a port (the seed), A imports it, B's gateway imports A, then takes over the seed's
// port (a restart), and A reconnects to it: the way such a pair arises in a deployment.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer, ProtocolError, ResourceTemplate } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Stage, createServer, definePlugin, isToolCall } from '@sluice/core';
import type { HttpListener, Plugin, SluiceServer } from '@sluice/core';
import { captureLogger, errorOf } from '@sluice/testing';
import { LoopGuardErrorCode, loopGuard } from '@sluice/plugin-loop-guard';
import type { LoopGuardOptions } from '@sluice/plugin-loop-guard';
import '@sluice/http';
import '@sluice/upstream';

const HOST = '127.0.0.1';
/** What each hop waits for its upstream: only what a bouncing request meets when nothing ends the loop. */
const HOP_TIMEOUT_MS = 5_000;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close().catch(() => {});
});

/** A gateway with the loop guard and a recorder of every request that arrives (before the guard sees it). */
function gateway(name: string, guard: LoopGuardOptions) {
  const seen: string[] = [];
  const recorder: Plugin = definePlugin({
    name: 'arrivals',
    version: '1.0.0',
    apply: ({ hooks }) =>
      hooks.request.tap(
        { name: 'arrivals', stage: Stage.FIRST },
        (ctx) => void seen.push(`${ctx.kind} ${isToolCall(ctx) ? ctx.tool.name : ctx.target}`),
      ),
  });
  const logs = captureLogger();
  const server = createServer({ name, version: '1.0.0', logger: logs.logger, plugins: [recorder, loopGuard(guard)] });
  open.push(server);
  return { server, seen, logs };
}

async function listen(server: SluiceServer, port = 0): Promise<HttpListener> {
  return server.listen({ host: HOST, port });
}

async function clientOf(listener: HttpListener, modern = false): Promise<Client> {
  const client = new Client(
    { name: 'feature-loop', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(listener.url));
  open.push(client);
  return client;
}

interface Pair {
  readonly a: ReturnType<typeof gateway>;
  readonly b: ReturnType<typeof gateway>;
  readonly aListener: HttpListener;
}

/**
 * A imports B and B imports A, over HTTP; each has the other as its one upstream with resources and completions.
 * With `relayTools`, B also imports A's tools: A's `seed_ping` (from the seed), which A then finds at B.
 */
async function mutualGateways(
  guard: (name: string) => LoopGuardOptions,
  { relayTools = false }: { relayTools?: boolean } = {},
): Promise<Pair> {
  const seed = createServer({ name: 'seed', version: '1.0.0', logger: captureLogger().logger });
  seed.tool({ name: 'seed_ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
  seed.extendSdk((mcp) =>
    mcp.registerResource(
      'seed',
      new ResourceTemplate('seed://{id}', { list: undefined, complete: { id: () => ['1'] } }),
      {},
      (uri) => ({ contents: [{ uri: uri.href, text: 'seed' }] }),
    ),
  );
  const seedListener = await listen(seed);
  const a = gateway('A', guard('A'));
  await a.server.import({
    name: 'b',
    connection: { type: 'http', url: seedListener.url.href },
    timeoutMs: HOP_TIMEOUT_MS,
    retry: { initialDelayMs: 10, maxDelayMs: 100 },
  });
  const aListener = await listen(a.server);

  const b = gateway('B', guard('B'));
  b.server.tool({ name: 'b_marker', handler: () => ({ content: [{ type: 'text', text: 'B' }] }) });
  // Unless asked to, B takes none of A's tools: the pair under test relays resources, not tools.
  const imported = await b.server.import({
    name: 'a',
    connection: { type: 'http', url: aListener.url.href },
    timeoutMs: HOP_TIMEOUT_MS,
    ...(relayTools ? {} : { denyTools: ['*'] }),
  });
  expect(imported.skipped.filter((s) => s.by !== 'core' || !s.reason.includes('denyTools'))).toEqual([]);

  // The restart: the seed goes away, and A finds it gone (a call through it fails), then B's gateway takes its port.
  await seed.close();
  const aClient = await clientOf(aListener);
  expect((await aClient.callTool({ name: 'seed_ping', arguments: {} })).isError).toBe(true);
  await listen(b.server, seedListener.port);
  await vi.waitFor(
    () => {
      const status = a.server.upstreams().find((u) => u.name === 'b');
      expect(status?.health).toBe('healthy');
      expect(status?.tools).toContain('b_marker');
      if (relayTools) expect(status?.tools).toContain('seed_ping');
    },
    { timeout: 30_000, interval: 20 },
  );
  await aClient.close();
  // What reached them while they were set up (the call that found the seed gone) is not under test.
  a.seen.length = 0;
  b.seen.length = 0;
  return { a, b, aListener };
}

/** The JSON-RPC error a request ended with. */
async function failureOf(request: Promise<unknown>): Promise<ProtocolError> {
  const outcome = await request.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(ProtocolError);
  return outcome as ProtocolError;
}

const read = (uri: string) => `resources/read ${uri}`;
const complete = (uri: string) => `completion/complete ${uri}`;

describe('two gateways that import each other, each with its own originService', () => {
  const named = (name: string): LoopGuardOptions => ({ originService: name });

  it('refuse a resources/read of a URI neither serves with LOOP_DETECTED at the first repeat', async () => {
    const { a, b, aListener } = await mutualGateways(named);
    const client = await clientOf(aListener);
    const error = await failureOf(client.readResource({ uri: 'loop://nowhere' }));
    expect(error.message).toContain(LoopGuardErrorCode.LOOP_DETECTED);
    const cycle = [
      'A/resources/read loop://nowhere',
      'B/resources/read loop://nowhere',
      'A/resources/read loop://nowhere',
    ];
    expect(error.data).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      plugin: 'loop-guard',
      entry: 'A/resources/read loop://nowhere',
      cycle,
    });
    // The client's read, B's relay of it, and A's again, refused there: nothing more reached either.
    expect(a.seen).toEqual([read('loop://nowhere'), read('loop://nowhere')]);
    expect(b.seen).toEqual([read('loop://nowhere')]);
    expect(a.logs.events('loop_guard.loop_detected')).toEqual([
      expect.objectContaining({ entry: 'A/resources/read loop://nowhere', cycle }),
    ]);
  }, 60_000);

  it('refuse the same completion/complete of a resource URI neither serves', async () => {
    const { a, b, aListener } = await mutualGateways(named);
    const client = await clientOf(aListener);
    const error = await failureOf(
      client.complete({ ref: { type: 'ref/resource', uri: 'loop://nowhere' }, argument: { name: 'id', value: '' } }),
    );
    expect(error.data).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      entry: 'A/completion/complete loop://nowhere',
    });
    expect(a.seen).toEqual([complete('loop://nowhere'), complete('loop://nowhere')]);
    expect(b.seen).toEqual([complete('loop://nowhere')]);
  }, 60_000);

  it('refuse the read of a 2026-07-28 client too: the stack crosses the round path with its own _meta', async () => {
    const { a, b, aListener } = await mutualGateways(named);
    const client = await clientOf(aListener, true);
    const error = await failureOf(client.readResource({ uri: 'loop://elsewhere' }));
    expect(error.data).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      entry: 'A/resources/read loop://elsewhere',
    });
    expect(a.seen).toEqual([read('loop://elsewhere'), read('loop://elsewhere')]);
    expect(b.seen).toEqual([read('loop://elsewhere')]);
  }, 60_000);

  it('refuse a URI of the template each lists from the other (the seed is gone) the same way', async () => {
    const { a, b, aListener } = await mutualGateways(named);
    const client = await clientOf(aListener);
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(['seed://{id}']);
    const error = await failureOf(client.readResource({ uri: 'seed://1' }));
    expect(error.data).toMatchObject({ code: LoopGuardErrorCode.LOOP_DETECTED, entry: 'A/resources/read seed://1' });
    expect([a.seen.length, b.seen.length]).toEqual([2, 1]);
  }, 60_000);
});

describe('two gateways that import each other without originService', () => {
  it('cannot tell a repeat from another service, so bound the chain by maxDepth: CALL_STACK_TOO_DEEP', async () => {
    const { a, b, aListener } = await mutualGateways(() => ({ maxDepth: 4 }));
    const client = await clientOf(aListener);
    const error = await failureOf(client.readResource({ uri: 'loop://nowhere' }));
    expect(error.data).toMatchObject({ code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP, depth: 4, maxDepth: 4 });
    // A, B, A, B each added an entry; the fifth arrival (at A) found four and was refused.
    expect(a.seen).toHaveLength(3);
    expect(b.seen).toHaveLength(2);
  }, 60_000);
});

describe('two gateways that relay a tool to each other', () => {
  // A's seed_ping goes to B, whose seed_ping is A's: neither runs it, each relays it. Nobody is the provider, so
  // only the relays' own entries can show the call coming back.
  const call = 'tools/call seed_ping';

  it('refuse it at the first repeat with LOOP_DETECTED, each with its own originService', async () => {
    const { a, b, aListener } = await mutualGateways((name) => ({ originService: name }), { relayTools: true });
    const client = await clientOf(aListener);
    const result = await client.callTool({ name: 'seed_ping', arguments: {} });
    expect(result.isError).toBe(true);
    const cycle = ['A/seed_ping', 'B/seed_ping', 'A/seed_ping'];
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      entry: 'A/seed_ping',
      side: 'consumer',
      cycle,
    });
    expect(a.seen).toEqual([call, call]);
    expect(b.seen).toEqual([call]);
    expect(a.logs.events('loop_guard.loop_detected')).toEqual([
      expect.objectContaining({ entry: 'A/seed_ping', side: 'consumer', cycle }),
    ]);
  }, 60_000);

  it('bound the ring by maxDepth without originService: CALL_STACK_TOO_DEEP', async () => {
    const { a, b, aListener } = await mutualGateways(() => ({ maxDepth: 4 }), { relayTools: true });
    const client = await clientOf(aListener);
    const result = await client.callTool({ name: 'seed_ping', arguments: {} });
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP,
      depth: 4,
      maxDepth: 4,
    });
    expect(a.seen).toHaveLength(3);
    expect(b.seen).toHaveLength(2);
  }, 60_000);
});

/**
 * A gateway B whose one upstream (a worker, in-process) serves `b://combined`, made of `a://part` that it
 * reads from gateway A, and `b://echo`, which it reads from A again; A imports B and a server of its own
 * parts. The worker passes the `_meta` of the read it serves on to its read from A, as a service that
 * takes part in call stacks does.
 */
async function chain() {
  const a = gateway('A', { originService: 'A' });
  const aListener = await listen(a.server);
  let toA: Client | undefined;
  const readFromA = async (uri: string, meta: Record<string, unknown> | undefined) => {
    if (toA === undefined) {
      toA = new Client({ name: 'worker', version: '1.0.0' });
      await toA.connect(new StreamableHTTPClientTransport(aListener.url));
      open.push(toA);
    }
    const answer = await toA.readResource({ uri, ...(meta === undefined ? {} : { _meta: meta }) });
    const first = answer.contents[0];
    return first !== undefined && 'text' in first ? first.text : '';
  };
  const worker = new McpServer({ name: 'worker', version: '1.0.0' });
  worker.registerResource('combined', 'b://combined', {}, async (uri, ctx) => ({
    contents: [{ uri: uri.href, text: `combined(${await readFromA('a://part', ctx.mcpReq._meta)})` }],
  }));
  worker.registerResource('echo', 'b://echo', {}, async (uri, ctx) => ({
    contents: [{ uri: uri.href, text: await readFromA('b://echo', ctx.mcpReq._meta) }],
  }));
  const b = gateway('B', { originService: 'B' });
  await b.server.import({ name: 'worker', connection: { type: 'in-process', server: worker } });
  const bListener = await listen(b.server);

  const partsSeen: unknown[] = [];
  const parts = new McpServer({ name: 'parts', version: '1.0.0' });
  parts.registerResource('part', 'a://part', {}, (uri, ctx) => {
    partsSeen.push(ctx.mcpReq._meta?.['dev.sluice/callStack']);
    return { contents: [{ uri: uri.href, text: 'part' }] };
  });
  await a.server.import({ name: 'parts', connection: { type: 'in-process', server: parts } });
  await a.server.import({
    name: 'b',
    connection: { type: 'http', url: bListener.url.href },
    timeoutMs: HOP_TIMEOUT_MS,
  });
  return { a, b, partsSeen, client: await clientOf(aListener) };
}

describe('a chain across two gateways that does not repeat a request', () => {
  it('reads through: A reads b://combined from B, whose upstream reads a://part back from A', async () => {
    const { client, partsSeen } = await chain();
    const answer = await client.readResource({ uri: 'b://combined' });
    expect(answer.contents[0]).toMatchObject({ text: 'combined(part)' });
    expect(partsSeen).toEqual([
      ['A/resources/read b://combined', 'B/resources/read b://combined', 'A/resources/read a://part'],
    ]);
  }, 60_000);

  it('refuses the read that comes back for the same item: A -> B -> worker -> A for b://echo', async () => {
    const { a, b, client } = await chain();
    const error = await failureOf(client.readResource({ uri: 'b://echo' }));
    expect(error.message).toContain(LoopGuardErrorCode.LOOP_DETECTED);
    expect(a.seen).toEqual([read('b://echo'), read('b://echo')]);
    expect(b.seen).toEqual([read('b://echo')]);
    expect(a.logs.events('loop_guard.loop_detected')).toEqual([
      expect.objectContaining({
        entry: 'A/resources/read b://echo',
        cycle: ['A/resources/read b://echo', 'B/resources/read b://echo', 'A/resources/read b://echo'],
      }),
    ]);
  }, 60_000);
});
