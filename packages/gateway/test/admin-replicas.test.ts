import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway, GatewayConfigInput } from '@sluice/gateway';
import { call, eventually, httpClient, rugPullUpstream } from './helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

/** Two replicas sharing a real redis-server, each with its own copy of the upstream. */
let redis: RedisProcess;
const replicas: Array<{ gateway: Gateway; origin: string; client: Client }> = [];

function replicaConfig(url: string): GatewayConfigInput {
  return {
    listen: { http: { port: 0 } },
    upstreams: [rugPullUpstream()],
    // syncMs 0: each call reads the shared ledger's version first, so a decision holds on the very next call.
    plugins: { risk: { ledger: { syncMs: 0 }, approval: { secret: 's'.repeat(32) } } },
    store: { redis: url, keyPrefix: 'admin-replicas:' },
    admin: {},
  };
}

async function decide(origin: string, action: 'approve' | 'revoke'): Promise<void> {
  const answer = await fetch(`${origin}/admin/v1/ledger/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ server: 'shop', tool: 'lookup' }),
  });
  expect(answer.status).toBe(200);
}

beforeAll(async () => {
  redis = await startRedis();
  for (let i = 0; i < 2; i++) {
    const gateway = createGateway(replicaConfig(redis.url), { logger: captureLogger().logger });
    const { http } = await gateway.start();
    replicas.push({ gateway, origin: (http?.url as URL).origin, client: await httpClient(http?.url as URL) });
  }
}, 60_000);

afterAll(async () => {
  for (const { gateway, client } of replicas) {
    await client.close().catch(() => {});
    await gateway.close();
  }
  await redis.stop();
});

describe('ledger decisions with a Redis store', () => {
  it('take effect on the next call on every replica, whichever replica took them', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    await call(a.client, 'shop_rug_pull');
    await eventually(
      async () => errorOf(await call(a.client, 'shop_lookup', { id: 'p1' }))?.code === 'TOOL_AWAITING_REREVIEW',
      'replica a to hold the redefined tool',
    );
    // Replica b's own upstream never changed, yet the shared ledger holds the tool there too.
    expect(errorOf(await call(b.client, 'shop_lookup', { id: 'p1' }))?.code).toBe('TOOL_AWAITING_REREVIEW');

    await decide(a.origin, 'approve');
    expect(textOf(await call(b.client, 'shop_lookup', { id: 'p1' }))).toBe('product p1: teapot, 12 EUR');

    await decide(b.origin, 'revoke');
    expect(errorOf(await call(a.client, 'shop_lookup', { id: 'p1' }))?.code).toBe('TOOL_REVOKED');
    expect(errorOf(await call(b.client, 'shop_lookup', { id: 'p1' }))?.code).toBe('TOOL_REVOKED');

    const rows = (await (await fetch(`${b.origin}/admin/v1/ledger`)).json()) as {
      tools: Array<{ tool: string; decisions: Array<{ action: string; by: string }> }>;
    };
    expect(rows.tools.find((t) => t.tool === 'lookup')?.decisions).toEqual([
      { action: 'approve', by: 'unauthenticated', at: expect.any(Number) as unknown },
      { action: 'revoke', by: 'unauthenticated', at: expect.any(Number) as unknown },
    ]);
  });
});
