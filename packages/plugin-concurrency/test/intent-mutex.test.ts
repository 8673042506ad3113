import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CoreErrorCode, MemoryStore, SluiceError } from '@sluice/core';
import type { CallContext, Executor, ToolAnnotations, ToolSource } from '@sluice/core';
import { TestServer, captureLogger, createTestKit, errorOf, textOf } from '@sluice/testing';
import { concurrency, fencingToken } from '@sluice/plugin-concurrency';
import type { ConcurrencyOptions } from '@sluice/plugin-concurrency';
import { Occupancy, gate, idle, lockOf, text, turns, until } from './support.js';

const refundArgs = z.object({ invoiceId: z.string(), i: z.number() });

/** A refund tool: destructive by policy, keyed by invoice, waiting at a gate. */
function refundTool(occupancy: Occupancy, door: Promise<void>, fences: (number | undefined)[] = []) {
  return {
    name: 'billing.refund',
    inputSchema: refundArgs,
    policy: { destructive: true, mutex: { keyArgs: ['invoiceId'] } },
    handler: ({ invoiceId, i }: z.output<typeof refundArgs>, ctx: CallContext) =>
      occupancy.during(`${invoiceId}#${i}`, async () => {
        fences.push(fencingToken(ctx));
        await door;
        return text(`refunded ${invoiceId}`);
      }),
  };
}

function quietServer(options: ConcurrencyOptions, store = new MemoryStore()): TestServer {
  return new TestServer({
    name: 's',
    version: '1',
    store,
    plugins: [concurrency(options)],
    logger: captureLogger().logger,
  });
}

/** Exposes a tool as if it came from an upstream server, through the core's own admission path. */
async function admitUpstream(
  server: TestServer,
  name: string,
  annotations: ToolAnnotations,
  trusted: boolean,
  base: Executor,
) {
  const source: ToolSource = { kind: 'upstream', upstream: 'payments', originalName: name, trusted };
  const tool = {
    name,
    definition: { name, inputSchema: { type: 'object' as const }, annotations },
    policy: {},
    source,
  };
  await server.admit(source, [{ tool, base }]);
}

/** Tools whose calls wait at one door, each recorded under its tool's name. */
function gatedTool(occupancy: Occupancy, door: Promise<void>) {
  return (name: string, annotations?: ToolAnnotations) => ({
    name,
    ...(annotations ? { annotations } : {}),
    handler: () => occupancy.during(name, async () => (await door, text(name))),
  });
}

/** Opens the door, waits for every call, and counts how many calls of `name` ran in all. */
async function finish(occupancy: Occupancy, door: { open(): void }, calls: Promise<unknown>[], name: string) {
  door.open();
  await Promise.all(calls);
  return occupancy.order.filter((n) => n === name).length;
}

describe('the intent mutex', () => {
  it('runs two refunds of one invoice one after the other, first come first served', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({ plugins: [concurrency()], tools: [refundTool(occupancy, door.opened)] });
    const calls = Array.from({ length: 4 }, (_, i) => kit.call('billing.refund', { invoiceId: 'inv_1', i }));
    await until(() => occupancy.started === 1);
    door.open();
    expect((await Promise.all(calls)).map(textOf)).toEqual(Array(4).fill('refunded inv_1'));
    expect(occupancy.peak).toBe(1);
    expect(occupancy.order).toEqual(['inv_1#0', 'inv_1#1', 'inv_1#2', 'inv_1#3']);
    await kit.close();
  });

  it('runs refunds of different invoices in parallel', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({ plugins: [concurrency()], tools: [refundTool(occupancy, door.opened)] });
    const calls = Array.from({ length: 5 }, (_, i) => kit.call('billing.refund', { invoiceId: `inv_${i}`, i }));
    await until(() => occupancy.started === 5);
    expect(occupancy.running).toBe(5);
    door.open();
    await Promise.all(calls);
    await kit.close();
  });

  it('runs five calls of an unannotated tool with maxActive: 5 at once: the mutex waits for a destructive mark', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      plugins: [concurrency()],
      tools: [
        {
          name: 'process_invoice',
          policy: { concurrency: { maxActive: 5, maxQueue: 20 } },
          handler: () => occupancy.during('invoice', async () => (await door.opened, text('ok'))),
        },
      ],
    });
    const calls = Array.from({ length: 5 }, () => kit.call('process_invoice'));
    await until(() => occupancy.started === 5);
    expect(occupancy.running).toBe(5);
    door.open();
    await Promise.all(calls);
    await kit.close();
  });

  it('serializes a local tool marked destructiveHint: true, and runs unmarked ones in parallel', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const work = gatedTool(occupancy, door.opened);
    const kit = await createTestKit({
      plugins: [concurrency()],
      tools: [work('unmarked'), work('wipe', { destructiveHint: true })],
    });
    const calls = Array.from({ length: 3 }, () => kit.call('unmarked'));
    const wipes = Array.from({ length: 3 }, () => kit.call('wipe'));
    await until(() => occupancy.started === 4);
    expect(occupancy.order.filter((n) => n === 'wipe')).toHaveLength(1);
    expect(await finish(occupancy, door, [...calls, ...wipes], 'wipe')).toBe(3);
    await kit.close();
  });

  it("with annotations: 'spec-defaults', runs read-only tools in parallel and serializes a tool with no annotations", async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const work = gatedTool(occupancy, door.opened);
    const kit = await createTestKit({
      plugins: [concurrency({ mutex: { annotations: 'spec-defaults' } })],
      tools: [work('lookup', { readOnlyHint: true }), work('additive', { destructiveHint: false }), work('unmarked')],
    });
    const calls = [
      ...Array.from({ length: 3 }, () => kit.call('lookup')),
      ...Array.from({ length: 3 }, () => kit.call('additive')),
    ];
    const unmarked = Array.from({ length: 3 }, () => kit.call('unmarked'));
    await until(() => occupancy.started === 7);
    expect(occupancy.order.filter((n) => n === 'unmarked')).toHaveLength(1);
    expect(await finish(occupancy, door, [...calls, ...unmarked], 'unmarked')).toBe(3);
    await kit.close();
  });

  it('hands the handler a fencing token that grows with each turn on the same action', async () => {
    const occupancy = new Occupancy();
    const fences: (number | undefined)[] = [];
    const kit = await createTestKit({
      plugins: [concurrency()],
      tools: [refundTool(occupancy, Promise.resolve(), fences)],
    });
    await Promise.all(Array.from({ length: 5 }, (_, i) => kit.call('billing.refund', { invoiceId: 'inv_9', i })));
    expect(fences.every((f) => typeof f === 'number')).toBe(true);
    expect(fences).toEqual([...(fences as number[])].sort((a, b) => a - b));
    expect(new Set(fences).size).toBe(5);
    await kit.close();
  });

  it('lets a call waiting for its turn leave at once when its signal fires, running nothing', async () => {
    const store = new MemoryStore();
    const occupancy = new Occupancy();
    const door = gate();
    const server = quietServer({}, store);
    server.tool(refundTool(occupancy, door.opened));
    const first = server.call('billing.refund', { invoiceId: 'inv_1', i: 0 });
    await until(() => occupancy.started === 1);
    const controller = new AbortController();
    const waiting = server.call('billing.refund', { invoiceId: 'inv_1', i: 1 }, { signal: controller.signal });
    await until(() => getEventListeners(controller.signal, 'abort').length === 1);
    controller.abort();
    const failure = await waiting.catch((e: unknown) => e);
    expect(SluiceError.is(failure) && failure.code).toBe(CoreErrorCode.CANCELLED);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    door.open();
    await first;
    expect(occupancy.order).toEqual(['inv_1#0']);
    expect(idle(lockOf(store, 'billing.refund', 'inv_1'))).toBe(true);
    await server.close();
  });

  it("lets a call made through ctx.call join its caller's turn on the same action instead of deadlocking", async () => {
    const fences: (number | undefined)[] = [];
    const kit = await createTestKit({
      plugins: [concurrency()],
      tools: [
        {
          name: 'ledger.write',
          inputSchema: z.object({ account: z.string(), depth: z.number() }),
          policy: { destructive: true, mutex: { keyArgs: ['account'] } },
          handler: async ({ account, depth }, ctx) => {
            fences.push(fencingToken(ctx));
            if (depth > 0) await ctx.call('ledger.write', { account, depth: depth - 1 });
            return text(`wrote ${account}`);
          },
        },
      ],
    });
    expect(textOf(await kit.call('ledger.write', { account: 'a', depth: 2 }))).toBe('wrote a');
    expect(fences).toHaveLength(3);
    expect(new Set(fences).size).toBe(1);
    await kit.close();
  });

  it('answers -32602 when a key argument is not a scalar', async () => {
    const kit = await createTestKit({
      plugins: [concurrency({ mutex: { keyArgs: ['target'] } })],
      tools: [{ name: 'erase', annotations: { destructiveHint: true }, handler: () => text('erased') }],
    });
    await expect(kit.call('erase', { target: { $ne: null } })).rejects.toMatchObject({ code: -32602 });
    expect(textOf(await kit.call('erase', { target: 'row-1' }))).toBe('erased');
    await kit.close();
  });

  it('sits inside the limit: a call waiting for its action holds a slot, so the limit bounds every waiter', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      plugins: [concurrency({ tools: { 'billing.*': { maxActive: 2, maxQueue: 1 } } })],
      tools: [refundTool(occupancy, door.opened)],
    });
    const calls = Array.from({ length: 4 }, (_, i) => kit.call('billing.refund', { invoiceId: 'inv_1', i }));
    const shed = await calls[3]!;
    expect(errorOf(shed)).toMatchObject({ code: 'SERVER_BUSY', active: 2, queued: 1 });
    expect(occupancy.started).toBe(1);
    door.open();
    await Promise.all(calls.slice(0, 3));
    expect(occupancy.peak).toBe(1);
    await kit.close();
  });

  it('is off entirely with mutex: false', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      plugins: [concurrency({ mutex: false })],
      tools: [refundTool(occupancy, door.opened)],
    });
    const calls = Array.from({ length: 3 }, (_, i) => kit.call('billing.refund', { invoiceId: 'inv_1', i }));
    await until(() => occupancy.started === 3);
    door.open();
    await Promise.all(calls);
    await kit.close();
  });

  it('in audit mode runs same-action calls at once and logs that they would have waited', async () => {
    const occupancy = new Occupancy();
    const door = gate();
    const kit = await createTestKit({
      plugins: [concurrency({ mode: 'audit' })],
      tools: [refundTool(occupancy, door.opened)],
    });
    const calls = Array.from({ length: 3 }, (_, i) => kit.call('billing.refund', { invoiceId: 'inv_1', i }));
    await until(() => occupancy.started === 3);
    expect(kit.logs.events('concurrency.mutex_would_wait')).toHaveLength(2);
    expect(kit.logs.events('concurrency.mutex_would_wait')[0]).toMatchObject({
      tool: 'billing.refund',
      keyArgs: ['invoiceId'],
    });
    door.open();
    await Promise.all(calls);
    await kit.close();
  });
});

describe('the intent mutex on imported tools', () => {
  const destructive = { destructiveHint: true };

  async function concurrentRuns(
    options: ConcurrencyOptions,
    name: string,
    annotations: ToolAnnotations,
    trusted: boolean,
  ) {
    const occupancy = new Occupancy();
    const door = gate();
    const server = quietServer(options);
    await admitUpstream(server, name, annotations, trusted, () =>
      occupancy.during(name, async () => (await door.opened, text('ok'))),
    );
    const calls = Array.from({ length: 3 }, () => server.call(name));
    await until(() => occupancy.started >= 1);
    await turns(100);
    const atOnce = occupancy.running;
    door.open();
    await Promise.all(calls);
    await server.close();
    return atOnce;
  }

  it('ignores the annotations of an untrusted upstream', async () => {
    expect(await concurrentRuns({}, 'pay.refund', destructive, false)).toBe(3);
  });

  it('serializes untrusted tools the operator names as destructive', async () => {
    expect(
      await concurrentRuns({ mutex: { destructive: ['pay.*'] } }, 'pay.refund', { readOnlyHint: true }, false),
    ).toBe(1);
  });

  it('believes the explicit marks of a trusted upstream', async () => {
    expect(await concurrentRuns({}, 'pay.refund', destructive, true)).toBe(1);
    expect(await concurrentRuns({}, 'pay.refund', {}, true)).toBe(3);
    expect(await concurrentRuns({}, 'pay.list', { readOnlyHint: true }, true)).toBe(3);
    expect(await concurrentRuns({ mutex: { exempt: ['pay.*'] } }, 'pay.refund', destructive, true)).toBe(3);
  });

  it("believes the annotations of a trusted upstream by the specification's defaults when asked", async () => {
    const specDefaults: ConcurrencyOptions = { mutex: { annotations: 'spec-defaults' } };
    expect(await concurrentRuns(specDefaults, 'pay.refund', {}, true)).toBe(1);
    expect(await concurrentRuns(specDefaults, 'pay.list', { readOnlyHint: true }, true)).toBe(3);
  });
});
