// Faults under load, on loopback, bounded in time: 10,000 concurrent calls
// against a guarded tool, an upstream killed or hanging while calls run, and
// clients that go away mid-call. Every call gets exactly one answer, the
// server stays up, and no concurrency slot is left taken.
import { afterEach, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult, SluiceServer } from '../../packages/core/src/index.js';
import { createServer } from '../../packages/core/src/index.js';
import { captureLogger, createTestKit, errorOf, textOf } from '../../packages/testing/src/index.js';
import type { TestKit } from '../../packages/testing/src/index.js';
import { everyPlugin } from './fixtures/sluice-under-test.js';
import { LEGACY, callTool, refusalCode } from './rpc.js';
import '../../packages/http/src/index.js';
import '../../packages/upstream/src/index.js';

const RAW_UPSTREAM = fileURLToPath(new URL('./fixtures/raw-upstream.mjs', import.meta.url));

/** Waits for a condition the test cannot await directly; a bug shows as the test's own timeout. */
async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

async function untilAsync(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Tallies answers by refusal code (`ok` for a result that is no refusal). */
function tally(results: readonly CallToolResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) {
    const code = errorOf(result)?.code ?? (result.isError ? 'ERROR' : 'ok');
    counts[code] = (counts[code] ?? 0) + 1;
  }
  return counts;
}

let kit: TestKit | undefined;
afterEach(async () => {
  await kit?.close();
  kit = undefined;
});

describe('10,000 concurrent calls against a guarded tool', () => {
  it('admits exactly maxActive + maxQueue, sheds the rest with SERVER_BUSY, and answers every call once', async () => {
    const CALLS = 10_000;
    const limit = { maxActive: 50, maxQueue: 950 };
    let entered = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    kit = await createTestKit({
      plugins: everyPlugin(),
      tools: [
        {
          name: 'guarded',
          annotations: { readOnlyHint: true },
          policy: { concurrency: limit },
          handler: async () => {
            entered++;
            await gate;
            return { content: [{ type: 'text', text: 'done' }] };
          },
        },
      ],
    });
    let answered = 0;
    let shed = 0;
    const calls = Array.from({ length: CALLS }, (_, i) =>
      kit!.call('guarded', { i }).then((result) => {
        answered++;
        if (errorOf(result)?.code === 'SERVER_BUSY') shed++;
        return result;
      }),
    );
    await until(
      () => shed === CALLS - limit.maxActive - limit.maxQueue && entered === limit.maxActive,
      'the shed calls and the first admitted ones',
    );
    open();
    const results = await Promise.all(calls);
    expect(answered).toBe(CALLS);
    expect(tally(results)).toEqual({
      ok: limit.maxActive + limit.maxQueue,
      SERVER_BUSY: CALLS - limit.maxActive - limit.maxQueue,
    });
    expect(entered).toBe(limit.maxActive + limit.maxQueue);
  }, 120_000);
});

describe('an upstream that dies or hangs while calls run', () => {
  async function withUpstream(
    limits: Record<string, { maxActive: number; maxQueue: number }>,
    timeoutMs: number,
  ): Promise<TestKit> {
    const created = await createTestKit({ plugins: everyPlugin(limits) });
    const imported = await created.server.import({
      name: 'up',
      connection: { type: 'stdio', command: process.execPath, args: [RAW_UPSTREAM] },
      timeoutMs,
      retry: { initialDelayMs: 50, maxDelayMs: 200 },
    });
    expect(imported.imported).toEqual(['slow', 'hang', 'pid']);
    return created;
  }

  it('answers all 300 calls when the upstream is SIGKILLed mid-call, reconnects, and frees every slot', async () => {
    const limit = { maxActive: 20, maxQueue: 300 };
    kit = await withUpstream({ slow: limit }, 60_000);
    const pid = Number(textOf(await kit.call('pid')));
    const load = Array.from({ length: 300 }, () => kit!.call('slow', { ms: 10_000 }));
    await sleep(300);
    process.kill(pid, 'SIGKILL');
    const results = await Promise.all(load);
    const counts = tally(results);
    expect(Object.keys(counts).sort()).toEqual(expect.arrayContaining(['UPSTREAM_DISCONNECTED']));
    expect((counts.UPSTREAM_DISCONNECTED ?? 0) + (counts.UPSTREAM_UNAVAILABLE ?? 0) + (counts.ok ?? 0)).toBe(300);

    await untilAsync(
      async () => Number(textOf(await kit!.call('pid'))) > 0 && Number(textOf(await kit!.call('pid'))) !== pid,
      'a new upstream process',
    );
    const refill = await Promise.all(
      Array.from({ length: limit.maxActive + limit.maxQueue + 1 }, () => kit!.call('slow', { ms: 20 })),
    );
    expect(tally(refill)).toEqual({ ok: limit.maxActive + limit.maxQueue, SERVER_BUSY: 1 });
  }, 120_000);

  it('times out all 50 calls to a hanging upstream and frees every slot', async () => {
    const limit = { maxActive: 10, maxQueue: 40 };
    kit = await withUpstream({ hang: limit }, 300);
    const first = await Promise.all(Array.from({ length: 50 }, () => kit!.call('hang')));
    expect(tally(first)).toEqual({ UPSTREAM_TIMEOUT: 50 });
    const second = await Promise.all(Array.from({ length: 51 }, () => kit!.call('hang')));
    expect(tally(second)).toEqual({ UPSTREAM_TIMEOUT: 50, SERVER_BUSY: 1 });
    expect(textOf(await kit.call('slow', { ms: 0 }))).toBe('slept 0');
  }, 120_000);
});

describe('clients that disconnect mid-call over HTTP', () => {
  const limit = { maxActive: 2, maxQueue: 0 };
  let server: SluiceServer | undefined;
  let entered = 0;
  let released = 0;

  async function start(): Promise<URL> {
    const created = createServer({
      name: 'disconnects',
      version: '1.0.0',
      logger: captureLogger().logger,
      plugins: everyPlugin(),
    });
    created.tool({
      name: 'hold',
      annotations: { readOnlyHint: true },
      policy: { concurrency: limit },
      handler: async (args, ctx) => {
        entered++;
        // Held for `ms`, or until the call is cancelled.
        await sleep(typeof args.ms === 'number' ? args.ms : 20_000, undefined, { signal: ctx.signal }).catch(() => {});
        released++;
        return { content: [{ type: 'text', text: ctx.signal.aborted ? 'aborted' : 'held' }] };
      },
    });
    server = created;
    return (await created.listen()).url;
  }
  afterEach(async () => {
    await server?.close();
    entered = 0;
    released = 0;
  });

  /** Both slots free again: two calls run at once and a third is shed. */
  async function expectSlotsFree(url: URL): Promise<void> {
    const before = entered;
    const controller = new AbortController();
    const pair = [
      callTool(url, 'hold', {}, 30_000, controller.signal).catch(() => undefined),
      callTool(url, 'hold', {}, 30_000, controller.signal).catch(() => undefined),
    ];
    await until(() => entered === before + limit.maxActive, 'both slots taken');
    expect(refusalCode(await callTool(url, 'hold', {}))).toBe('SERVER_BUSY');
    controller.abort();
    await Promise.all(pair);
  }

  it('2026-07-28: aborting the fetch cancels the call and frees its slot; the server keeps serving', async () => {
    const url = await start();
    for (let round = 0; round < 20; round++) {
      const controller = new AbortController();
      const pending = callTool(url, 'hold', {}, 30_000, controller.signal).catch(() => 'aborted');
      await until(() => entered === round + 1, 'the call to start');
      controller.abort();
      expect(await pending).toBe('aborted');
      await until(() => released === round + 1, 'the handler to see the abort');
    }
    await expectSlotsFree(url);
  }, 120_000);

  async function legacySession(url: URL): Promise<Record<string, string>> {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      }),
    });
    const session = {
      ...headers,
      'mcp-session-id': init.headers.get('mcp-session-id') ?? '',
      'mcp-protocol-version': LEGACY,
    };
    await init.text();
    await fetch(url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    }).then((r) => r.text());
    return session;
  }

  // 2025-11-25 says a disconnection is not a cancellation (the client may resume
  // the stream): the call runs to its end, then gives its slot back.
  it('2025-11-25: a call whose client disconnects runs to its end and then frees its slot', async () => {
    const url = await start();
    const session = await legacySession(url);
    for (let round = 0; round < 5; round++) {
      const controller = new AbortController();
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: round + 1,
        method: 'tools/call',
        params: { name: 'hold', arguments: { ms: 200 } },
      });
      const pending = fetch(url, { method: 'POST', headers: session, body, signal: controller.signal })
        .then((r) => r.text())
        .catch(() => 'aborted');
      await until(() => entered === round + 1, 'the call to start');
      controller.abort();
      expect(await pending).toBe('aborted');
      await until(() => released === round + 1, 'the call to end');
    }
    await expectSlotsFree(url);
  }, 120_000);
});
