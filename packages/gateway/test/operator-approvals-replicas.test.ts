// Operator approvals across two replicas sharing a real redis-server: each lists the other's questions, an
// answer given on one reaches the call waiting on the other, and a client that reconnects to the other
// replica (either protocol version) gets the decision there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import type { ApprovalEvent, RiskPlugin } from '@sluice/plugin-risk';
import { eventually } from './helpers.js';
import { adminOf, manualClient, paymentsConfig, yesClient } from './operator-helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

let redis: RedisProcess;
const replicas: Array<{ gateway: Gateway; url: URL; api: ReturnType<typeof adminOf> }> = [];
const events: ApprovalEvent[] = [];
const seen = new Set<string>();

beforeAll(async () => {
  redis = await startRedis();
  for (let i = 0; i < 2; i++) {
    const gateway = createGateway(paymentsConfig({ store: { redis: redis.url, keyPrefix: 'operator-replicas:' } }), {
      logger: captureLogger().logger,
    });
    const url = (await gateway.start()).http?.url as URL;
    (gateway.server.plugins.find((p) => p.name === 'risk') as RiskPlugin).onApprovalEvent((e) => events.push(e));
    replicas.push({ gateway, url, api: adminOf(url) });
  }
}, 60_000);

afterAll(async () => {
  for (const { gateway } of replicas) await gateway.close();
  await redis.stop();
});

const pair = () => replicas as [(typeof replicas)[0], (typeof replicas)[0]];

describe('operator approvals with a Redis store', () => {
  it('lists a question asked on one replica on the other, whose answer reaches the call that waits', async () => {
    const [a, b] = pair();
    const before = await b.api.transfers();
    const client = await yesClient(b.url, 'legacy');
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'ann', cents: 100 } });
      const question = await a.api.next(seen);
      expect((await b.api.pending()).map((q) => q.id)).toContain(question.id);
      expect((await a.api.request('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect(textOf(await result)).toBe(`transfer ${before + 1}: 100 cents to ann`);
      expect((await a.api.pending()).map((q) => q.id)).not.toContain(question.id);
      expect((await b.api.pending()).map((q) => q.id)).not.toContain(question.id);
    } finally {
      await client.close();
    }
  });

  it('carries a denial with its reason to the other replica', async () => {
    const [a, b] = pair();
    const client = await yesClient(a.url, 'modern');
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'eve', cents: 200 } });
      const question = await b.api.next(seen);
      expect(
        (await b.api.request('/admin/v1/approvals/deny', { id: question.id, reason: 'unknown payee' })).status,
      ).toBe(200);
      const refused = await result;
      expect(errorOf(refused)?.code).toBe('APPROVAL_DECLINED');
      expect(JSON.stringify(refused.content)).toContain('unknown payee');
    } finally {
      await client.close();
    }
  });

  it('a 2026-07-28 client that reconnects to the other replica retries there and gets the decision', async () => {
    const [a, b] = pair();
    const before = await b.api.transfers();
    const args = { payee: 'bob', cents: 300 };
    const first = await manualClient(a.url);
    const { requestState } = await first.send(args);
    await first.close();
    const question = await a.api.next(seen);
    const second = await manualClient(b.url);
    try {
      // Before the answer: still waiting, on the other replica too.
      expect((await second.send(args, { requestState })).resultType).toBe('input_required');
      expect((await a.api.request('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect(textOf(await second.send(args, { requestState }))).toBe(`transfer ${before + 1}: 300 cents to bob`);
      // The state is spent fleet-wide.
      const third = await manualClient(a.url);
      expect(errorOf(await third.send(args, { requestState }))?.code).toBe('APPROVAL_INVALID');
      await third.close();
    } finally {
      await second.close();
    }
  });

  it('a 2025-11-25 client that reconnects to the other replica is joined to its question and gets the decision', async () => {
    const [a, b] = pair();
    const [beforeA, beforeB] = [await a.api.transfers(), await b.api.transfers()];
    const args = { payee: 'dave', cents: 400 };
    const first = await yesClient(a.url, 'legacy');
    const abandoned = first.callTool({ name: 'pay_transfer', arguments: args }).catch(() => undefined);
    const question = await a.api.next(seen);
    await first.close();
    const second = await yesClient(b.url, 'legacy');
    try {
      const result = second.callTool({ name: 'pay_transfer', arguments: args });
      await eventually(
        () => events.some((e) => e.kind === 'asked' && e.id === question.id && e.joined),
        'the call on the other replica to join the question',
      );
      expect((await a.api.request('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect(textOf(await result)).toBe(`transfer ${beforeB + 1}: 400 cents to dave`);
      await abandoned;
      expect(await a.api.transfers()).toBe(beforeA);
    } finally {
      await second.close();
    }
  });
});
