import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { CoreErrorCode, MemoryStore, SluiceError, Stage, createServer, definePlugin } from '@sluice/core';
import type { CallToolResult, Outcome, Plugin, Semaphore, SemaphoreOptions, Store, ToolDefinition } from '@sluice/core';
import { captureLogger, createTestKit, errorOf, textOf } from '@sluice/testing';
import { ConcurrencyErrorCode, concurrency } from '@sluice/plugin-concurrency';
import { Occupancy, aborted, gate, idle, slotsOf, text, until } from './support.js';

const READ_ONLY = { readOnlyHint: true } as const;

/** A read-only tool (so the intent mutex stays out of the way) that waits at a gate. */
function slowTool(
  name: string,
  occupancy: Occupancy,
  door: Promise<void>,
  limit?: { maxActive: number; maxQueue?: number },
) {
  return {
    name,
    annotations: READ_ONLY,
    inputSchema: z.object({ i: z.number().optional() }),
    ...(limit ? { policy: { concurrency: limit } } : {}),
    handler: ({ i }: { i?: number | undefined }) => occupancy.during(i, async () => (await door, text(`done ${i}`))),
  } satisfies ToolDefinition<z.ZodObject<{ i: z.ZodOptional<z.ZodNumber> }>>;
}

function observer(outcomes: Outcome[]): Plugin {
  return definePlugin({
    name: 'observer',
    version: '0.0.0',
    apply: ({ hooks }) =>
      hooks.settled.tap({ name: 'observer', stage: Stage.LAST }, (_ctx, outcome) => void outcomes.push(outcome)),
  });
}

describe('the concurrency limit', () => {
  it('sheds the 26th call with SERVER_BUSY when 5 run and 20 wait', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      plugins: [concurrency({ retryAfterMs: 750 })],
      tools: [slowTool('billing', occupancy, door.opened, { maxActive: 5, maxQueue: 20 })],
    });
    const calls = Array.from({ length: 26 }, (_, i) => kit.call('billing', { i }));
    const shed = await calls[25]!;
    expect(occupancy.started).toBe(5);
    expect(shed.isError).toBe(true);
    expect(errorOf(shed)).toMatchObject({
      code: ConcurrencyErrorCode.SERVER_BUSY,
      retryAfterMs: 750,
      active: 5,
      queued: 20,
    });
    expect(textOf(shed)).toContain('<error_code>SERVER_BUSY</error_code>');
    expect(textOf(shed)).toContain('Tool "billing" is full (5 running, 20 waiting)');
    expect(textOf(shed)).toMatch(/<suggestion>.*one at a time or in small batches/);
    expect(kit.logs.events('concurrency.shed')).toMatchObject([
      { tool: 'billing', active: 5, queued: 20, maxActive: 5, maxQueue: 20 },
    ]);
    door.open();
    const served = await Promise.all(calls.slice(0, 25));
    expect(served.map(textOf)).toEqual(Array.from({ length: 25 }, (_, i) => `done ${i}`));
    expect(occupancy.peak).toBe(5);
    await kit.close();
  });

  it('admits queued calls in the order they arrived', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      plugins: [concurrency()],
      tools: [slowTool('serial', occupancy, door.opened, { maxActive: 1, maxQueue: 30 })],
    });
    const calls = Array.from({ length: 30 }, (_, i) => kit.call('serial', { i }));
    await until(() => occupancy.started === 1);
    door.open();
    await Promise.all(calls);
    expect(occupancy.order).toEqual(Array.from({ length: 30 }, (_, i) => i));
    await kit.close();
  });

  it('never runs more than maxActive calls under random delays, and sheds only beyond the queue', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 16 }),
        async (maxActive, maxQueue, delays) => {
          const occupancy = new Occupancy();
          const server = createServer({
            name: 's',
            version: '1',
            plugins: [concurrency()],
            logger: captureLogger().logger,
          });
          server.tool({
            name: 'jittery',
            annotations: READ_ONLY,
            policy: { concurrency: { maxActive, maxQueue } },
            handler: async (args) =>
              occupancy.during(
                args.ms,
                async () => (await new Promise((r) => setTimeout(r, args.ms as number)), text('ok')),
              ),
          });
          const results = await Promise.all(delays.map((ms) => server.call('jittery', { ms })));
          const shedCount = results.filter((r) => errorOf(r)?.code === 'SERVER_BUSY').length;
          expect(occupancy.peak).toBeLessThanOrEqual(maxActive);
          // Every call arrives before any finishes, so exactly the overflow is shed.
          expect(shedCount).toBe(Math.max(0, delays.length - maxActive - maxQueue));
          await server.close();
        },
      ),
      { numRuns: 30 },
    );
  });

  it('releases the slot after the handler throws', async () => {
    let calls = 0;
    const kit = await createTestKit({
      plugins: [concurrency()],
      tools: [
        {
          name: 'flaky',
          annotations: READ_ONLY,
          policy: { concurrency: { maxActive: 1 } },
          handler: () => {
            if (calls++ === 0) throw new Error('boom');
            return text('recovered');
          },
        },
      ],
    });
    expect(errorOf(await kit.call('flaky'))?.code).toBe(CoreErrorCode.TOOL_ERROR);
    expect(textOf(await kit.call('flaky'))).toBe('recovered');
    await kit.close();
  });

  it('releases the slot when a wrapper inside it throws', async () => {
    let failures = 1;
    const inner = definePlugin({
      name: 'inner',
      version: '0.0.0',
      apply: ({ hooks }) =>
        hooks.execute.tap({ name: 'inner', stage: Stage.DEFAULT }, (next) => async (ctx) => {
          if (failures-- > 0) throw new Error('inner bug');
          return next(ctx);
        }),
    });
    const store = new MemoryStore();
    const kit = await createTestKit({
      store,
      plugins: [concurrency(), inner],
      tools: [
        {
          name: 'wrapped',
          annotations: READ_ONLY,
          policy: { concurrency: { maxActive: 1 } },
          handler: () => text('fine'),
        },
      ],
    });
    await expect(kit.call('wrapped')).rejects.toMatchObject({ code: -32603 });
    expect(idle(slotsOf(store, 'wrapped', { maxActive: 1, maxQueue: 0 }))).toBe(true);
    expect(textOf(await kit.call('wrapped'))).toBe('fine');
    await kit.close();
  });

  it('releases the slot when the caller cancels mid-execution', async () => {
    const store = new MemoryStore();
    const started = gate();
    const outcomes: Outcome[] = [];
    const kit = await createTestKit({
      store,
      plugins: [concurrency(), observer(outcomes)],
      tools: [
        {
          name: 'long',
          annotations: READ_ONLY,
          policy: { concurrency: { maxActive: 1 } },
          inputSchema: z.object({ wait: z.boolean() }),
          handler: async ({ wait }, ctx) => {
            if (!wait) return text('quick');
            started.open();
            await aborted(ctx);
            throw ctx.signal.reason;
          },
        },
      ],
    });
    const controller = new AbortController();
    const cancelled = kit.client.callTool({ name: 'long', arguments: { wait: true } }, { signal: controller.signal });
    await started.opened;
    controller.abort();
    await expect(cancelled).rejects.toThrow();
    await until(() => outcomes.length === 1);
    expect(outcomes[0]!.status).toBe('cancelled');
    expect(idle(slotsOf(store, 'long', { maxActive: 1, maxQueue: 0 }))).toBe(true);
    expect(textOf(await kit.call('long', { wait: false }))).toBe('quick');
    await kit.close();
  });

  it('releases the slot before a postCall plugin truncates the result', async () => {
    const store = new MemoryStore();
    const slotsAtPostCall: number[] = [];
    const truncate = definePlugin({
      name: 'truncate',
      version: '0.0.0',
      apply: ({ hooks }) =>
        hooks.postCall.tap({ name: 'truncate', stage: Stage.TRANSFORM }, (result: CallToolResult) => {
          slotsAtPostCall.push(slotsOf(store, 'big', { maxActive: 1, maxQueue: 0 }).active);
          return { ...result, content: [{ type: 'text', text: `${textOf(result).slice(0, 4)}[truncated]` }] };
        }),
    });
    const kit = await createTestKit({
      store,
      plugins: [concurrency(), truncate],
      tools: [
        {
          name: 'big',
          annotations: READ_ONLY,
          policy: { concurrency: { maxActive: 1 } },
          handler: () => text('x'.repeat(10_000)),
        },
      ],
    });
    expect(textOf(await kit.call('big'))).toBe('xxxx[truncated]');
    expect(textOf(await kit.call('big'))).toBe('xxxx[truncated]');
    expect(slotsAtPostCall).toEqual([0, 0]);
    await kit.close();
  });

  it('lets a queued call whose signal fires leave at once, without running the handler or leaving a listener', async () => {
    const store = new MemoryStore();
    const outcomes: Outcome[] = [];
    const occupancy = new Occupancy();
    const door = gate();
    const server = createServer({
      name: 's',
      version: '1',
      store,
      plugins: [concurrency(), observer(outcomes)],
      logger: captureLogger().logger,
    });
    server.tool(slowTool('queue', occupancy, door.opened, { maxActive: 1, maxQueue: 5 }));
    const first = server.call('queue', { i: 0 });
    await until(() => occupancy.started === 1);
    const controller = new AbortController();
    const queued = server.call('queue', { i: 1 }, { signal: controller.signal });
    const behind = server.call('queue', { i: 2 });
    await until(() => getEventListeners(controller.signal, 'abort').length === 1);
    controller.abort(new Error('user pressed stop'));
    const failure = await queued.catch((e: unknown) => e);
    expect(SluiceError.is(failure) && failure.code).toBe(CoreErrorCode.CANCELLED);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(outcomes.map((o) => o.status)).toEqual(['cancelled']);
    door.open();
    expect((await Promise.all([first, behind])).map(textOf)).toEqual(['done 0', 'done 2']);
    expect(occupancy.order).toEqual([0, 2]);
    expect(idle(slotsOf(store, 'queue', { maxActive: 1, maxQueue: 5 }))).toBe(true);
    await server.close();
  });

  it('runs nothing of a call cancelled before it reached a free slot', async () => {
    let ran = 0;
    const server = createServer({ name: 's', version: '1', plugins: [concurrency()], logger: captureLogger().logger });
    server.tool({
      name: 'free',
      annotations: READ_ONLY,
      policy: { concurrency: { maxActive: 2 } },
      handler: () => (ran++, text('ran')),
    });
    const failure = await server.call('free', {}, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(SluiceError.is(failure) && failure.code).toBe(CoreErrorCode.CANCELLED);
    expect(ran).toBe(0);
    await server.close();
  });

  it('leaves a tool with no limit and no destructive effect unwrapped', async () => {
    const store = new MemoryStore();
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      store,
      plugins: [concurrency({ tools: { 'other.*': { maxActive: 1 } } })],
      tools: [slowTool('free', occupancy, door.opened)],
    });
    const calls = Array.from({ length: 20 }, (_, i) => kit.call('free', { i }));
    await until(() => occupancy.started === 20);
    expect(store.semaphoreCount).toBe(0);
    door.open();
    await Promise.all(calls);
    const base = async () => text('base');
    const tool = {
      name: 'free',
      definition: { name: 'free', inputSchema: { type: 'object' as const }, annotations: READ_ONLY },
      policy: {},
      source: { kind: 'local' as const },
    };
    expect(kit.server.hooks.execute.call(base, tool)).toBe(base);
    await kit.close();
  });

  it('applies the default to tools with no limit of their own, and a tool policy before any pattern', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      plugins: [concurrency({ default: { maxActive: 1 }, tools: { 'wide*': { maxActive: 1 } } })],
      tools: [
        slowTool('plain', occupancy, door.opened),
        slowTool('wide.own', occupancy, door.opened, { maxActive: 3 }),
      ],
    });
    const plain = [kit.call('plain', { i: 1 }), kit.call('plain', { i: 2 })];
    expect(errorOf(await plain[1]!)?.code).toBe('SERVER_BUSY');
    const wide = Array.from({ length: 4 }, (_, i) => kit.call('wide.own', { i }));
    expect(errorOf(await wide[3]!)?.code).toBe('SERVER_BUSY');
    expect(occupancy.started).toBe(4);
    door.open();
    await Promise.all([...plain, ...wide]);
    await kit.close();
  });

  it('in audit mode lets every call through and logs the ones it would have shed', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      plugins: [concurrency({ mode: 'audit' })],
      tools: [slowTool('audited', occupancy, door.opened, { maxActive: 1, maxQueue: 1 })],
    });
    const calls = Array.from({ length: 4 }, (_, i) => kit.call('audited', { i }));
    await until(() => occupancy.started === 4);
    expect(kit.logs.events('concurrency.would_shed')).toMatchObject([
      { tool: 'audited', maxActive: 1, maxQueue: 1, running: 2 },
      { tool: 'audited', maxActive: 1, maxQueue: 1, running: 2 },
    ]);
    door.open();
    expect((await Promise.all(calls)).every((r) => !r.isError)).toBe(true);
    expect(kit.logs.events('concurrency.shed')).toEqual([]);
    await kit.close();
  });
});

describe('stores without a synchronous fast path', () => {
  /** The real in-memory store, seen through the interface a remote store offers: tryAcquire never answers. */
  function remoteLike(store: MemoryStore): Store {
    const wrap = (semaphore: Semaphore): Semaphore => ({
      tryAcquire: () => undefined,
      acquire: (signal) => semaphore.acquire(signal),
      get active() {
        return semaphore.active;
      },
      get queued() {
        return semaphore.queued;
      },
    });
    return Object.assign(Object.create(store) as Store, {
      semaphore: (key: string, options: SemaphoreOptions) => wrap(store.semaphore(key, options)),
      lock: (key: string) => wrap(store.lock(key)),
    });
  }

  it('in audit mode logs only the calls it would really have shed', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      store: remoteLike(new MemoryStore()),
      plugins: [concurrency({ mode: 'audit' })],
      tools: [slowTool('audited', occupancy, door.opened, { maxActive: 1, maxQueue: 1 })],
    });
    const calls = Array.from({ length: 3 }, (_, i) => kit.call('audited', { i }));
    await until(() => occupancy.started === 3);
    expect(kit.logs.events('concurrency.would_shed')).toHaveLength(1);
    door.open();
    expect((await Promise.all(calls)).every((r) => !r.isError)).toBe(true);
    await kit.close();
  });

  it('in enforce mode queues and sheds as with the in-memory fast path', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      store: remoteLike(new MemoryStore()),
      plugins: [concurrency()],
      tools: [slowTool('limited', occupancy, door.opened, { maxActive: 1, maxQueue: 1 })],
    });
    const calls = Array.from({ length: 3 }, (_, i) => kit.call('limited', { i }));
    expect(errorOf(await calls[2]!)?.code).toBe('SERVER_BUSY');
    door.open();
    expect((await Promise.all(calls.slice(0, 2))).every((r) => !r.isError)).toBe(true);
    expect(occupancy.started).toBe(2);
    await kit.close();
  });
});

describe('the options', () => {
  it('throw at construction, naming the bad field', () => {
    expect(() => concurrency({ default: { maxActive: 0 } })).toThrow(/default\.maxActive/);
    expect(() => concurrency({ tools: { 'bad name!': { maxActive: 1 } } })).toThrow(/tools\.bad name!/);
    expect(() => concurrency({ tools: { ok: { maxActive: 1, maxQueue: -1 } } })).toThrow(/tools\.ok\.maxQueue/);
    expect(() => concurrency({ mutex: { keyArgs: [''] } })).toThrow(/mutex/);
    expect(() => concurrency({ mode: 'loud' as never })).toThrow(/mode/);
    expect(() => concurrency({ maxActive: 3 } as never)).toThrow(/Unrecognized key/);
  });

  it('refuse a tool whose policy is malformed, at registration', async () => {
    const server = createServer({ name: 's', version: '1', plugins: [concurrency()], logger: captureLogger().logger });
    server.tool({ name: 'odd', policy: { concurrency: { maxActive: 1.5 } }, handler: () => text('x') });
    const failure = await server.ready().catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: ConcurrencyErrorCode.INVALID_POLICY, plugin: 'concurrency' });
    expect(String(failure)).toMatch(
      /Tool "odd" has invalid settings for plugin "concurrency": policy\.concurrency\.maxActive/,
    );
    await server.close();
  });
});
