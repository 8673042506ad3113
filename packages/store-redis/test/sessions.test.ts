// 2025-11-25 sessions shared through Redis: three servers in this process, each with its own Redis
// store under one prefix (as replicas have), and a client whose requests go round-robin over them.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import '@sluice/http';
import '@sluice/upstream';
import { memoUpstream } from '../../core/test/fixtures/upstream-helpers.js';
import { startRedis } from './helpers/redis-server.js';
import { StoreFactory } from './helpers/stores.js';

const redis = await startRedis();
const look = redis.client();
let stores: StoreFactory | undefined;
const servers: SluiceServer[] = [];

afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  await Promise.allSettled(servers.splice(0).map((s) => s.close()));
  await stores?.closeAll();
});

const KEY_A = 'first-caller-key-0123456789abcdef';
const KEY_B = 'second-caller-key-0123456789abcdef';

interface Replicas {
  readonly listeners: HttpListener[];
  /** Tools that saw their call cancelled, by replica. */
  readonly cancelled: string[];
  /** Tool calls that ran, by replica. */
  readonly ran: string[];
}

/** Three servers sharing one Redis: `confirm` elicits, `hang` waits until cancelled. */
async function replicas(options: { auth?: boolean; idleMs?: number } = {}): Promise<Replicas> {
  stores = new StoreFactory(redis);
  const cancelled: string[] = [];
  const ran: string[] = [];
  const listeners: HttpListener[] = [];
  for (const name of ['a', 'b', 'c']) {
    const server = createServer({
      name: 'fleet',
      version: '1',
      logger: captureLogger().logger,
      store: stores.open().store,
    });
    servers.push(server);
    server.tool({
      name: 'where',
      handler: () => {
        ran.push(name);
        return { content: [{ type: 'text', text: name }] };
      },
    });
    server.tool({
      name: 'confirm',
      handler: async (_args, ctx) => {
        ran.push(name);
        const answer = await ctx.mcp!.mcpReq.elicitInput({
          mode: 'form',
          message: 'Proceed?',
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        });
        return {
          content: [{ type: 'text', text: `${answer.action}:${JSON.stringify(answer.content ?? {})} on ${name}` }],
        };
      },
    });
    server.tool({
      name: 'hang',
      handler: async (_args, ctx) => {
        ran.push(name);
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        cancelled.push(name);
        return { content: [] };
      },
    });
    listeners.push(
      await server.listen(
        options.auth
          ? {
              ...(options.idleMs === undefined ? {} : { sessionIdleMs: options.idleMs }),
              auth: {
                type: 'apiKeys',
                keys: [
                  { name: 'first', key: KEY_A },
                  { name: 'second', key: KEY_B },
                ],
              },
            }
          : options.idleMs === undefined
            ? {}
            : { sessionIdleMs: options.idleMs },
      ),
    );
  }
  return { listeners, cancelled, ran };
}

interface Served {
  readonly replica: number;
  readonly method: string;
  readonly body: string;
  /** The response's status, once it came. */
  status?: number;
}

/** A fetch that sends each request to the next server in turn, and notes which served what. */
function roundRobin(listeners: readonly HttpListener[], log: Served[], key?: string): typeof fetch {
  let next = 0;
  return async (input, init) => {
    const replica = next++ % listeners.length;
    const url = new URL(String(input instanceof Request ? input.url : input));
    const target = listeners[replica]!.url;
    url.host = target.host;
    const headers = new Headers(init?.headers);
    if (key !== undefined) headers.set('authorization', `Bearer ${key}`);
    const served: Served = {
      replica,
      method: init?.method ?? 'GET',
      body: typeof init?.body === 'string' ? init.body : '',
    };
    log.push(served);
    const response = await fetch(url, { ...init, headers });
    served.status = response.status;
    return response;
  };
}

async function connect(fleet: Replicas, log: Served[], key?: string): Promise<{ client: Client; sessionId: string }> {
  const client = new Client({ name: 'c', version: '1' }, { capabilities: { elicitation: { form: {} } } });
  const transport = new StreamableHTTPClientTransport(fleet.listeners[0]!.url, {
    fetch: roundRobin(fleet.listeners, log, key),
  });
  await client.connect(transport);
  return { client, sessionId: transport.sessionId! };
}

/** Posts one message to one server in a session, by hand; the response's status. */
async function postTo(listener: HttpListener, sessionId: string, message: unknown, key?: string): Promise<number> {
  const response = await fetch(listener.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(message),
  });
  await response.body?.cancel();
  return response.status;
}

/** How many servers listen on the session bus now. */
async function busListeners(): Promise<number> {
  const [, count] = (await look.pubsub('NUMSUB', `${stores!.prefix}msg:mcp-sessions`)) as [string, unknown];
  return Number(count);
}

const posts = (log: Served[], pattern: RegExp): Served[] =>
  log.filter((s) => s.method === 'POST' && pattern.test(s.body));

describe('2025-11-25 sessions in a shared store', () => {
  it('serves consecutive requests of one session on every replica, initialized once', async () => {
    const fleet = await replicas();
    const log: Served[] = [];
    const { client } = await connect(fleet, log);
    const answers: string[] = [];
    for (let i = 0; i < 6; i++) answers.push(textOf(await client.callTool({ name: 'where', arguments: {} })));
    expect(new Set(answers)).toEqual(new Set(['a', 'b', 'c']));
    expect(posts(log, /"method":"initialize"/)).toHaveLength(1);
    await client.close();
  });

  it('carries an elicitation asked on one replica back from the answer posted to another', async () => {
    const fleet = await replicas();
    const log: Served[] = [];
    const { client } = await connect(fleet, log);
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { ok: true } }));
    // The elicitation travels on the session's GET stream, which the client opens after the handshake.
    await expect.poll(() => log.some((s) => s.method === 'GET' && s.status === 200)).toBe(true);
    for (let i = 0; i < 3; i++) {
      const result = await client.callTool({ name: 'confirm', arguments: {} });
      expect(textOf(result)).toMatch(/^accept:\{"ok":true\} on [abc]$/);
    }
    const calls = posts(log, /"name":"confirm"/);
    const answers = posts(log, /"action":"accept"/);
    expect(answers).toHaveLength(3);
    // Round-robin: each answer went to another replica than the call that asked for it.
    for (let i = 0; i < 3; i++) expect(answers[i]!.replica).not.toBe(calls[i]!.replica);
    await client.close();
  });

  it('has every replica listen on the session bus, whatever it asked for while its store was still connecting', async () => {
    // A replica listens on the bus from its listener's start, often before its store's subscriber connection is
    // up: that subscription was sometimes never made, and the replica missed every session end and answer.
    await replicas();
    await expect.poll(busListeners, { timeout: 5_000 }).toBe(3);
  });

  it("gives each of two replicas' questions in one session its own answer", async () => {
    // Two calls of one session ask at once from two replicas: each copy numbered its questions from 0, so the
    // client answered two questions with id 0, and the first answer (routed to every copy) approved both calls.
    const fleet = await replicas();
    const log: Served[] = [];
    const { client } = await connect(fleet, log);
    // Every replica serves the session once, and listens on the session bus, before the calls start.
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'where', arguments: {} });
    await expect.poll(busListeners, { timeout: 5_000 }).toBe(3);
    fleet.ran.length = 0;
    const ids: unknown[] = [];
    const releases: Array<(answer: { action: 'accept' | 'decline'; content?: { ok: boolean } }) => void> = [];
    client.setRequestHandler('elicitation/create', (_request, extra) => {
      ids.push((extra as { mcpReq?: { id?: unknown } }).mcpReq?.id);
      return new Promise((resolve) => releases.push(resolve));
    });
    await expect.poll(() => log.some((s) => s.method === 'GET' && s.status === 200)).toBe(true);
    const first = client.callTool({ name: 'confirm', arguments: {} });
    await expect.poll(() => releases.length).toBe(1);
    const second = client.callTool({ name: 'confirm', arguments: {} });
    await expect.poll(() => releases.length).toBe(2);
    expect(new Set(fleet.ran).size).toBe(2);
    expect(new Set(ids).size).toBe(2);
    releases[0]!({ action: 'accept', content: { ok: true } });
    releases[1]!({ action: 'decline' });
    expect(textOf(await first)).toMatch(/^accept:\{"ok":true\} on [abc]$/);
    expect(textOf(await second)).toMatch(/^decline:\{\} on [abc]$/);
    await client.close();
  });

  it('cancels a call on the replica that runs it when the cancellation lands on another', async () => {
    const fleet = await replicas();
    const log: Served[] = [];
    const { client } = await connect(fleet, log);
    const abort = new AbortController();
    const call = client.callTool({ name: 'hang', arguments: {} }, { signal: abort.signal });
    await expect.poll(() => fleet.ran.length).toBe(1);
    abort.abort('the user gave up');
    await expect(call).rejects.toThrow();
    await expect.poll(() => fleet.cancelled).toEqual(fleet.ran);
    const hang = posts(log, /"name":"hang"/)[0]!;
    const cancel = posts(log, /notifications\/cancelled/)[0]!;
    expect(cancel.replica).not.toBe(hang.replica);
    await client.close();
  });

  it('ends the session on every replica when the client deletes it, and drops its record', async () => {
    const fleet = await replicas();
    const log: Served[] = [];
    const { client, sessionId } = await connect(fleet, log);
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'where', arguments: {} });
    expect(await look.exists(`${stores!.prefix}kv:mcp-session:${sessionId}`)).toBe(1);
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    expect(await look.exists(`${stores!.prefix}kv:mcp-session:${sessionId}`)).toBe(0);
    for (const listener of fleet.listeners) {
      await expect
        .poll(async () => {
          return await postTo(listener, sessionId, { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} });
        })
        .toBe(404);
    }
    await client.close();
  });

  it('closes every copy of a session whose end the bus never carried, and never writes its record back', async () => {
    // Attack: a caller floods the bus until Redis drops the replicas' subscriber connections; a DELETE (or an
    // eviction) made meanwhile reached the store but not the other replicas, whose copies went on serving the
    // session and, at their next refresh, wrote its record back for every replica to serve again.
    const fleet = await replicas({ idleMs: 2_000 });
    const log: Served[] = [];
    const { client, sessionId } = await connect(fleet, log);
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'where', arguments: {} });
    const record = `${stores!.prefix}kv:mcp-session:${sessionId}`;
    expect(await look.exists(record)).toBe(1);
    // The end reaches the store, and no replica hears of it.
    const elsewhere = stores!.open().store;
    await elsewhere.sessions.remove(sessionId);
    await elsewhere.delete(`mcp-session:${sessionId}`);
    // Past a quarter of the idle time each copy's next use would refresh the record: wait for that to be due.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const list = { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} };
    for (const listener of fleet.listeners)
      await expect.poll(async () => await postTo(listener, sessionId, list), { timeout: 5_000 }).toBe(404);
    expect(await look.exists(record)).toBe(0);
    await client.close().catch(() => {});
  });

  it("holds a caller's answers for other replicas to its share of the bus, and a request to 32 of them", async () => {
    // Attack: a caller posts arrays of made-up answers (each array about 1 MiB) to its own sessions: every one went
    // to every replica over the bus, until Redis dropped the replicas' subscriptions and the messages they held.
    const fleet = await replicas();
    const { client, sessionId } = await connect(fleet, []);
    await client.callTool({ name: 'where', arguments: {} });
    let busBytes = 0;
    let fenced = false;
    const unsubscribe = await stores!.open().store.messages.subscribe('mcp-sessions', (text) => {
      busBytes += text.length;
      if (text.includes('"id":199999')) fenced = true;
    });
    const answer = (id: number, pad = '') => ({ jsonrpc: '2.0', id: 100_000 + id, result: { pad } });
    const many = Array.from({ length: 33 }, (_, i) => answer(i));
    expect(await postTo(fleet.listeners[1]!, sessionId, many)).toBe(400);
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 30; i++)
      statuses.push(await postTo(fleet.listeners[1]!, sessionId, [answer(i, 'x'.repeat(100_000))]));
    const seconds = Math.ceil((Date.now() - started) / 1_000) + 1;
    expect(statuses.filter((status) => status === 202).length).toBeGreaterThan(0);
    expect(statuses).toContain(429);
    // A last answer through the same replica, once its share allows: the bus has carried the flood by the time it
    // carries this one. What reached the bus is within the share for the seconds the flood lasted.
    const flooded = busBytes;
    await expect.poll(() => postTo(fleet.listeners[1]!, sessionId, [answer(99_999)]), { timeout: 5_000 }).toBe(202);
    await expect.poll(() => fenced).toBe(true);
    expect(flooded).toBeLessThanOrEqual(busBytes);
    expect(busBytes).toBeLessThanOrEqual(seconds * 1024 * 1024 + 4096);
    unsubscribe();
    await client.close();
  });

  it("refuses another caller's session id on a replica that never saw it, as if unknown", async () => {
    const fleet = await replicas({ auth: true });
    const log: Served[] = [];
    const { client, sessionId } = await connect(fleet, log, KEY_A);
    await client.callTool({ name: 'where', arguments: {} });
    for (const listener of fleet.listeners) {
      const status = await postTo(
        listener,
        sessionId,
        { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'where', arguments: {} } },
        KEY_B,
      );
      expect(status).toBe(404);
    }
    await client.close();
  });

  it('ignores garbage on the session channel and in session records, and keeps serving', async () => {
    const fleet = await replicas();
    const log: Served[] = [];
    const { client } = await connect(fleet, log);
    const bus = stores!.open().store.messages;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        async (text) => {
          await bus.publish('mcp-sessions', text);
        },
      ),
      { numRuns: 200 },
    );
    const records = fc.oneof(
      fc.jsonValue(),
      fc.record({ owner: fc.constant(null), init: fc.jsonValue(), bytes: fc.nat(), ready: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(records, async (record) => {
        const id = randomUUID();
        await look.set(`${stores!.prefix}kv:mcp-session:${id}`, JSON.stringify(record));
        const status = await postTo(fleet.listeners[1]!, id, {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/list',
          params: {},
        });
        // A record that is not one (its init no initialize request) is no session: never a crash, never half a session.
        expect(status).toBe(404);
      }),
      { numRuns: 50 },
    );
    for (let i = 0; i < 3; i++)
      expect(textOf(await client.callTool({ name: 'where', arguments: {} }))).toMatch(/^[abc]$/);
    await client.close();
  });

  it("serves a session whatever its record's subscriptions hold", async () => {
    const fleet = await replicas();
    const { client, sessionId } = await connect(fleet, []);
    const stored = JSON.parse((await look.get(`${stores!.prefix}kv:mcp-session:${sessionId}`))!) as object;
    const subscriptions = fc.oneof(
      fc.jsonValue(),
      fc.array(fc.string({ maxLength: 200 }), { maxLength: 50 }),
      fc.array(fc.string({ minLength: 2_000, maxLength: 3_000 }), { minLength: 30, maxLength: 40 }),
    );
    // The planted sessions are counted in the fleet's index, as a session opened on some replica is.
    const index = stores!.open().store.sessions;
    const limits = { maxSessions: 10_000, maxMemoryBytes: 1e9, idleMs: 60_000, handshakeMs: 60_000 };
    await fc.assert(
      fc.asyncProperty(subscriptions, async (held) => {
        const id = randomUUID();
        await index.admit(id, 1_000, limits);
        await look.set(`${stores!.prefix}kv:mcp-session:${id}`, JSON.stringify({ ...stored, subscriptions: held }));
        const message = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
        // Too many, too long or not URIs: the record's subscriptions are replayed or dropped, the session serves.
        expect(await postTo(fleet.listeners[1]!, id, message)).toBe(200);
      }),
      { numRuns: 40 },
    );
    await client.close();
  });
});

describe('a copy built while the session changes', () => {
  it('applies a subscription recorded while it read and replayed the record', async () => {
    // A replica building its copy of a session read the record, then replayed it; a subscription the client made
    // meanwhile through another replica was announced on the bus before the copy existed, and the copy never had it.
    stores = new StoreFactory(redis);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const slow = stores.open().store;
    // The second replica's store hands back a session record only once the test lets it: read, then held.
    const delayed = new Proxy(slow, {
      get(target, property, receiver) {
        if (property !== 'get') return Reflect.get(target, property, receiver) as unknown;
        return async (key: string) => {
          const value = await target.get(key);
          if (key.startsWith('mcp-session:')) {
            held = true;
            await gate;
          }
          return value;
        };
      },
    });
    const upstreams = [memoUpstream(), memoUpstream()];
    const listeners: HttpListener[] = [];
    for (const [k, store] of [stores.open().store, delayed].entries()) {
      const server = createServer({ name: 'fleet', version: '1', logger: captureLogger().logger, store });
      servers.push(server);
      await server.import({ name: 'memo', connection: { type: 'in-process', server: upstreams[k]!.server } });
      listeners.push(await server.listen({}));
    }
    const client = new Client({ name: 'c', version: '1' });
    const transport = new StreamableHTTPClientTransport(listeners[0]!.url);
    await client.connect(transport);
    await client.subscribeResource({ uri: 'memo://one' });
    let announced = false;
    const unsubscribe = await stores.open().store.messages.subscribe('mcp-sessions', (text) => {
      if (text.includes('memo://two')) announced = true;
    });
    // The second replica starts its copy, reads the record (one subscription) and waits.
    const building = postTo(listeners[1]!, transport.sessionId!, { jsonrpc: '2.0', id: 7, method: 'ping' });
    await expect.poll(() => held).toBe(true);
    await client.subscribeResource({ uri: 'memo://two' });
    await expect.poll(() => announced).toBe(true);
    release();
    expect(await building).toBe(200);
    await expect.poll(() => [...upstreams[1]!.held].sort()).toEqual(['memo://one', 'memo://two']);
    unsubscribe();
    await client.close();
  });
});
