// A caller's share of approval questions over two replicas sharing a real redis-server: a caller that filled
// its share on one replica is refused on the other too, another caller is still asked there and its question
// is listed on both and answered; an answered question frees its place fleet-wide.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway, GatewayConfigInput } from '@sluice/gateway';
import { OPS_KEY, adminOf, paymentsConfig } from './operator-helpers.js';
import type { Round } from './operator-helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

const VICTIM_KEY = 'approval-share-replicas-victim-01';
const READER_KEY = 'approval-share-replicas-reader-01';

let redis: RedisProcess;
const replicas: Array<{ gateway: Gateway; url: URL; api: ReturnType<typeof adminOf> }> = [];
const clients: Client[] = [];

beforeAll(async () => {
  redis = await startRedis();
  const base = paymentsConfig();
  const risk = base.plugins?.risk as Record<string, unknown> & { approval: Record<string, unknown> };
  const config: GatewayConfigInput = {
    ...base,
    listen: {
      http: {
        port: 0,
        auth: {
          type: 'apiKeys',
          keys: [
            { name: 'ops', key: OPS_KEY, scopes: ['admin'] },
            { name: 'victim', key: VICTIM_KEY },
            { name: 'reader', key: READER_KEY },
          ],
        },
      },
    },
    plugins: { risk: { ...risk, approval: { ...risk.approval, questions: { perCaller: 3 } } } },
    store: { redis: redis.url, keyPrefix: 'approval-share:' },
  };
  for (let i = 0; i < 2; i++) {
    const gateway = createGateway(config, { logger: captureLogger().logger });
    const url = (await gateway.start()).http?.url as URL;
    replicas.push({ gateway, url, api: adminOf(url) });
  }
}, 60_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  for (const { gateway } of replicas) await gateway.close();
  await redis.stop();
});

async function modernAs(key: string, url: URL): Promise<Client> {
  const client = new Client(
    { name: 'share-replicas', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { autoFulfill: false } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  clients.push(client);
  return client;
}

type Answer = Round & CallToolResult & { _meta?: Record<string, { question?: string } | undefined> };

async function transfer(client: Client, payee: string): Promise<Answer> {
  return (await client.callTool(
    { name: 'pay_transfer', arguments: { payee, cents: 1 } },
    { allowInputRequired: true },
  )) as Answer;
}

describe("a caller's share of approval questions with a Redis store", () => {
  it('holds on every replica; another caller is still asked, listed on both and answered', async () => {
    const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    const onA = await modernAs(READER_KEY, a.url);
    const onB = await modernAs(READER_KEY, b.url);
    for (const payee of ['r1', 'r2', 'r3']) expect((await transfer(onA, payee)).resultType).toBe('input_required');
    expect(errorOf(await transfer(onB, 'r4'))?.code).toBe('APPROVAL_BUSY');
    expect(errorOf(await transfer(onA, 'r5'))?.code).toBe('APPROVAL_BUSY');

    const victim = await modernAs(VICTIM_KEY, b.url);
    const asked = await transfer(victim, 'victim');
    expect(asked.resultType).toBe('input_required');
    const id = asked._meta?.['dev.sluice/approval']?.question as string;
    for (const { api } of replicas) expect((await api.pending()).map((q) => q.id)).toContain(id);
    expect((await a.api.request('/admin/v1/approvals/approve', { id })).status).toBe(200);
    const ran = await victim.callTool(
      { name: 'pay_transfer', arguments: { payee: 'victim', cents: 1 }, requestState: asked.requestState } as never,
      { allowInputRequired: true },
    );
    expect(textOf(ran)).toMatch(/cents to victim$/);

    // An answer given on B frees the reader's place on A.
    const [oldest] = (await b.api.pending()).filter((q) => q.caller === 'reader');
    expect((await b.api.request('/admin/v1/approvals/deny', { id: oldest?.id, reason: 'no' })).status).toBe(200);
    expect((await transfer(onA, 'r6')).resultType).toBe('input_required');
    expect(errorOf(await transfer(onB, 'r7'))?.code).toBe('APPROVAL_BUSY');
  });
});
