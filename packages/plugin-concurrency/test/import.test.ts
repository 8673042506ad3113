import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/server';
import { MemoryStore } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import { createTestKit, errorOf, textOf } from '@sluice/testing';
import { concurrency } from '@sluice/plugin-concurrency';
import type { ConcurrencyOptions } from '@sluice/plugin-concurrency';
import { Occupancy, gate, idle, lockOf, slotsOf, until } from './support.js';
import '@sluice/upstream';

/** An upstream SDK server whose tools wait at a gate, counting what reaches them. */
function payments(occupancy: Occupancy, door: Promise<void>) {
  const upstream = new McpServer({ name: 'payments', version: '1.0.0' });
  const done = (text: string): CallToolResult => ({ content: [{ type: 'text', text }] });
  upstream.registerTool(
    'refund',
    { inputSchema: z.object({ invoiceId: z.string() }), annotations: { destructiveHint: true } },
    async ({ invoiceId }) => occupancy.during(invoiceId, async () => (await door, done(`refunded ${invoiceId}`))),
  );
  upstream.registerTool('report', { annotations: { readOnlyHint: true } }, async () =>
    occupancy.during('report', async () => (await door, done('report'))),
  );
  return upstream;
}

async function gateway(options: ConcurrencyOptions, trusted = false) {
  const occupancy = new Occupancy();
  const door = gate();
  const store = new MemoryStore();
  const kit = await createTestKit({ store, plugins: [concurrency(options)] });
  const result = await kit.server.import({
    name: 'payments',
    namespace: 'pay',
    separator: '.',
    trusted,
    connection: { type: 'in-process', server: payments(occupancy, door.opened) },
  });
  expect([...result.imported].sort()).toEqual(['pay.refund', 'pay.report']);
  return { kit, occupancy, door, store };
}

describe('the guard on tools imported from an upstream server', () => {
  it('sheds calls beyond the limit set by pattern, before they reach the upstream', async () => {
    const { kit, occupancy, door, store } = await gateway({ tools: { 'pay.*': { maxActive: 2, maxQueue: 1 } } });
    const calls = Array.from({ length: 4 }, () => kit.call('pay.report'));
    const shed = await calls[3]!;
    expect(errorOf(shed)).toMatchObject({ code: 'SERVER_BUSY', active: 2, queued: 1 });
    expect(occupancy.started).toBe(2);
    door.open();
    expect((await Promise.all(calls.slice(0, 3))).map(textOf)).toEqual(['report', 'report', 'report']);
    expect(occupancy.peak).toBe(2);
    expect(idle(slotsOf(store, 'pay.report', { maxActive: 2, maxQueue: 1 }))).toBe(true);
    await kit.close();
  });

  it("ignores an untrusted upstream's annotations: its destructive tool runs in parallel", async () => {
    const { kit, occupancy, door } = await gateway({});
    const calls = [kit.call('pay.refund', { invoiceId: 'inv_1' }), kit.call('pay.refund', { invoiceId: 'inv_1' })];
    await until(() => occupancy.started === 2);
    door.open();
    await Promise.all(calls);
    await kit.close();
  });

  it('serializes refunds of one invoice when the operator names the tool destructive, and runs other invoices alongside', async () => {
    const { kit, occupancy, door, store } = await gateway({
      mutex: { destructive: ['pay.refund'], keyArgs: ['invoiceId'] },
    });
    const calls = [
      kit.call('pay.refund', { invoiceId: 'inv_1' }),
      kit.call('pay.refund', { invoiceId: 'inv_1' }),
      kit.call('pay.refund', { invoiceId: 'inv_2' }),
    ];
    await until(() => occupancy.started === 2);
    expect(occupancy.order).toEqual(['inv_1', 'inv_2']);
    door.open();
    expect((await Promise.all(calls)).map(textOf)).toEqual(['refunded inv_1', 'refunded inv_1', 'refunded inv_2']);
    expect(occupancy.order.filter((k) => k === 'inv_1')).toHaveLength(2);
    expect(idle(lockOf(store, 'pay.refund', 'inv_1')) && idle(lockOf(store, 'pay.refund', 'inv_2'))).toBe(true);
    await kit.close();
  });

  it("believes a trusted upstream's annotations", async () => {
    const { kit, occupancy, door } = await gateway({}, true);
    const calls = [
      kit.call('pay.refund', { invoiceId: 'inv_1' }),
      kit.call('pay.refund', { invoiceId: 'inv_2' }),
      kit.call('pay.report'),
      kit.call('pay.report'),
    ];
    await until(() => occupancy.started === 3);
    expect(occupancy.order.filter((k) => k === 'report')).toHaveLength(2);
    expect(occupancy.order.filter((k) => String(k).startsWith('inv_'))).toHaveLength(1);
    door.open();
    await Promise.all(calls);
    expect(occupancy.peak).toBe(3);
    await kit.close();
  });

  it('lets a queued call cancelled by the client leave the line without ever reaching the upstream', async () => {
    const { kit, occupancy, door, store } = await gateway({ tools: { 'pay.report': { maxActive: 1, maxQueue: 2 } } });
    const first = kit.call('pay.report');
    await until(() => occupancy.started === 1);
    const controller = new AbortController();
    const cancelled = kit.client
      .callTool({ name: 'pay.report', arguments: {} }, { signal: controller.signal })
      .catch((e: unknown) => e);
    const third = kit.call('pay.report');
    const slots = () => slotsOf(store, 'pay.report', { maxActive: 1, maxQueue: 2 });
    await until(() => slots().queued === 2);
    controller.abort();
    await until(() => slots().queued === 1);
    expect(await cancelled).toBeInstanceOf(Error);
    door.open();
    expect((await Promise.all([first, third])).map(textOf)).toEqual(['report', 'report']);
    expect(occupancy.started).toBe(2);
    expect(idle(slots())).toBe(true);
    await kit.close();
  });
});
