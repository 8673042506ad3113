// Chains through tools imported from an upstream that emits next-tool directives but does not run them.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@sluice/core';
import { MetaKey, createTestKit, errorOf, metaOf, textOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import type { ChainRecord } from '@sluice/plugin-chaining';
import { ChainingErrorCode, chaining, withNext } from '@sluice/plugin-chaining';
import { Runs, busyGuard, text } from './support.js';
import '@sluice/upstream';

const stepsOf = (result: CallToolResult) =>
  metaOf<ChainRecord>(result, MetaKey.CHAIN)?.steps.map((s) => `${s.tool}:${s.code ?? s.outcome}`);

/** The upstream names its own tools in its directives, as it knows nothing of Sluice's namespace. */
function shop(runs: Runs): McpServer {
  const server = new McpServer({ name: 'shop', version: '1.0.0' });
  const directive = (tool: string, args: Record<string, unknown>) => ({ nextTool: { tool, arguments: args } });
  server.registerTool('find_order', { inputSchema: z.object({ orderId: z.string() }) }, ({ orderId }) => {
    runs.hit('find_order');
    return { ...text(`order ${orderId}: damaged`), _meta: directive('issue_refund', { orderId, amount: 20 }) };
  });
  server.registerTool(
    'issue_refund',
    { inputSchema: z.object({ orderId: z.string(), amount: z.number() }) },
    ({ orderId, amount }) => {
      runs.hit('issue_refund');
      return text(`refunded ${amount} on ${orderId}`);
    },
  );
  server.registerTool('bad_refund', {}, () => ({
    ...text('bad'),
    _meta: directive('issue_refund', { orderId: 'o1', amount: 'lots' }),
  }));
  server.registerTool('to_local', {}, () => ({ ...text('to_local'), _meta: directive('local_audit', {}) }));
  return server;
}

let kit: TestKit | undefined;
afterEach(async () => {
  await kit?.close();
  kit = undefined;
});

async function gateway(runs: Runs, busy = busyGuard([])) {
  kit = await createTestKit({
    plugins: [busy, chaining()],
    tools: [
      { name: 'local_audit', handler: () => (runs.hit('local_audit'), text('audited')) },
      {
        name: 'start_refund',
        handler: () => withNext(text('starting'), 'shop_issue_refund', { orderId: 'o9', amount: 5 }),
      },
    ],
  });
  const imported = await kit.server.import({
    name: 'shop',
    connection: { type: 'in-process', server: shop(runs) },
    namespace: 'shop',
  });
  expect(imported.imported).toContain('shop_issue_refund');
  return kit;
}

describe('a chain through an imported tool', () => {
  it("runs the upstream's next tool in Sluice, under its exposed name", async () => {
    const runs = new Runs();
    const gw = await gateway(runs);
    const result = await gw.call('shop_find_order', { orderId: 'o1' });
    expect(textOf(result)).toBe('refunded 20 on o1');
    expect(stepsOf(result)).toEqual(['shop_issue_refund:ok']);
    expect(result._meta?.nextTool).toBeUndefined();
    expect([runs.of('find_order'), runs.of('issue_refund')]).toEqual([1, 1]);
  });

  it("checks the upstream tool's arguments before any guard or the upstream sees the call", async () => {
    const runs = new Runs();
    const busy = busyGuard([]);
    const gw = await gateway(runs, busy);
    const result = await gw.call('shop_bad_refund', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.INVALID_ARGUMENTS);
    expect(textOf(result)).toMatch(/arguments for "shop_issue_refund" do not match its input schema: .*amount/);
    expect(busy.seen.map((s) => s.tool)).toEqual(['shop_bad_refund']);
    expect(runs.of('issue_refund')).toBe(0);
  });

  it('does not let an upstream steer a chain into a tool it does not list itself', async () => {
    const runs = new Runs();
    const gw = await gateway(runs);
    const result = await gw.call('shop_to_local', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.UNKNOWN_TOOL);
    expect(runs.of('local_audit')).toBe(0);
  });

  it('lets a local tool chain into an imported tool by its exposed name', async () => {
    const runs = new Runs();
    const gw = await gateway(runs);
    const result = await gw.call('start_refund', {});
    expect(textOf(result)).toBe('refunded 5 on o9');
    expect(stepsOf(result)).toEqual(['shop_issue_refund:ok']);
  });

  it('applies the guards to the proxied chained call', async () => {
    const runs = new Runs();
    const gw = await gateway(runs, busyGuard(['shop_issue_refund']));
    const result = await gw.call('shop_find_order', { orderId: 'o2' });
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.STEP_REFUSED);
    expect(stepsOf(result)).toEqual(['shop_issue_refund:SERVER_BUSY']);
    expect(textOf(result)).toContain('order o2: damaged');
    expect(runs.of('issue_refund')).toBe(0);
  });
});
