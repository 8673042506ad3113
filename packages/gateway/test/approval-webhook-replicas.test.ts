// The approval webhook on replicas sharing a real redis-server: a call held on one replica is answered through
// its webhook link followed against another (as a load balancer sends it), and gets the decision once; a link
// used on one replica and again on another acts once, two links raced on two replicas answer once between them,
// and a forged, altered or expired link answers nothing on any replica.
import { createServer } from 'node:http';
import type http from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, textOf } from '@sluice/testing';
import type { GatewayConfigInput } from '@sluice/gateway';
import type { ApprovalEvent, RiskPlugin } from '@sluice/plugin-risk';
import { eventually, startReplicas } from './helpers.js';
import type { InProcessReplica } from './helpers.js';
import { adminOf, paymentsConfig, yesClient } from './operator-helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

const SECRET = 'webhook-replicas-secret-for-the-receiver-01';

interface Delivery {
  readonly id: string;
  readonly approveUrl: string;
  readonly denyUrl: string;
}

interface Replica extends InProcessReplica {
  readonly api: ReturnType<typeof adminOf>;
}

let redis: RedisProcess;
let receiver: Server;
let hook: string;
const deliveries: Delivery[] = [];
const waiters: Array<() => void> = [];
const events: ApprovalEvent[] = [];
const open: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  redis = await startRedis();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      deliveries.push(JSON.parse(body) as Delivery);
      for (const wake of waiters.splice(0)) wake();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/sluice`;
}, 60_000);

afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await redis.stop();
});

/** `count` replicas of one config on one key prefix of the shared Redis, each posting to the receiver (or `webhook`'s). */
async function fleet(
  count: number,
  prefix: string,
  timeoutMs?: number,
  webhook: { url?: string; maxInFlight?: number; maxQueued?: number } = {},
): Promise<Replica[]> {
  const base = paymentsConfig({ store: { redis: redis.url, keyPrefix: prefix } });
  const risk = base.plugins?.risk as { approval: Record<string, unknown> };
  const config: GatewayConfigInput = {
    ...base,
    admin: { scopes: ['admin'], webhook: { url: hook, secret: SECRET, ...webhook } },
    plugins: {
      ...base.plugins,
      risk: { ...risk, approval: { ...risk.approval, ...(timeoutMs === undefined ? {} : { timeoutMs }) } },
    },
  };
  const started = await startReplicas(config, count, (close) => open.push(close));
  return started.map((replica) => {
    (replica.gateway.server.plugins.find((p) => p.name === 'risk') as RiskPlugin).onApprovalEvent((e) =>
      events.push(e),
    );
    return { ...replica, api: adminOf(replica.url) };
  });
}

/** The webhook delivery of the next question posted after `seen` deliveries. */
async function delivered(seen: number): Promise<Delivery> {
  while (deliveries.length <= seen) await new Promise<void>((resolve) => waiters.push(resolve));
  return deliveries[seen] as Delivery;
}

/** The same link, sent to another replica (what a load balancer in front of the fleet does). */
function on(replica: Replica, link: string): URL {
  const moved = new URL(link);
  moved.host = replica.url.host;
  return moved;
}

async function follow(link: URL | string, reason?: string): Promise<Response> {
  return await fetch(link, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(reason === undefined ? {} : { reason }),
  });
}

const answered = (id: string) => events.filter((e) => e.kind === 'answered' && e.id === id);

describe('approval webhook links on replicas sharing Redis', () => {
  it('a call held on A is approved through the link followed on B, runs once on A, and the link is spent on both', async () => {
    const [a, b] = (await fleet(2, 'webhook-replicas-approve:')) as [Replica, Replica];
    const [beforeA, beforeB] = [await a.api.transfers(), await b.api.transfers()];
    const seen = deliveries.length;
    const client = await yesClient(a.url, 'legacy');
    open.push(() => client.close());
    const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'acme', cents: 501 } });
    const delivery = await delivered(seen);
    // A asked, so A posted, with links to itself.
    expect(new URL(delivery.approveUrl).host).toBe(a.url.host);
    expect((await b.api.pending()).map((q) => q.id)).toContain(delivery.id);

    const preview = await fetch(on(b, delivery.approveUrl));
    expect(preview.status).toBe(200);
    expect(await preview.text()).toContain(`Approve the call waiting as question <code>${delivery.id}</code>`);
    const answer = await follow(on(b, delivery.approveUrl));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ id: delivery.id, decision: 'approved', via: 'webhook' });
    expect(textOf(await result)).toBe(`transfer ${beforeA + 1}: 501 cents to acme`);

    // Spent on every replica: the same link on A, on B again, and the deny link on either.
    for (const link of [delivery.approveUrl, on(b, delivery.approveUrl), on(b, delivery.denyUrl)]) {
      const again = await follow(link, 'too late');
      expect(again.status).toBe(409);
      expect(await again.json()).toEqual({ error: 'the question was already answered' });
    }
    expect(await a.api.transfers()).toBe(beforeA + 1);
    expect(await b.api.transfers()).toBe(beforeB);
    expect(answered(delivery.id)).toHaveLength(1);
    // Posted once, by the replica that asked.
    expect(deliveries.filter((d) => d.id === delivery.id)).toHaveLength(1);
    expect((await a.api.pending()).map((q) => q.id)).not.toContain(delivery.id);
    expect((await b.api.pending()).map((q) => q.id)).not.toContain(delivery.id);
  });

  it('a link used on A and then on B acts once: the denial stands and nothing runs', async () => {
    const [a, b] = (await fleet(2, 'webhook-replicas-twice:')) as [Replica, Replica];
    const before = await a.api.transfers();
    const seen = deliveries.length;
    const client = await yesClient(a.url, 'legacy');
    open.push(() => client.close());
    const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'eve', cents: 502 } });
    const delivery = await delivered(seen);
    expect((await follow(delivery.denyUrl, 'eve is not a supplier')).status).toBe(200);
    const refused = await result;
    expect(errorOf(refused)?.code).toBe('APPROVAL_DECLINED');
    expect(JSON.stringify(refused.content)).toContain('eve is not a supplier');
    const replayed = await follow(on(b, delivery.denyUrl), 'replayed on B');
    expect(replayed.status).toBe(409);
    const approved = await follow(on(b, delivery.approveUrl));
    expect(approved.status).toBe(409);
    expect(await a.api.transfers()).toBe(before);
    expect(answered(delivery.id)).toHaveLength(1);
    expect(answered(delivery.id)[0]).toMatchObject({ decision: 'denied', reason: 'eve is not a supplier' });
  });

  it('links raced on three replicas at once answer once between them, and the held call gets that answer', async () => {
    const replicas = await fleet(3, 'webhook-replicas-race:');
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    for (let round = 0; round < 3; round++) {
      const before = await a.api.transfers();
      const seen = deliveries.length;
      const client = await yesClient(a.url, 'legacy');
      open.push(() => client.close());
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: `p${round}`, cents: 600 + round } });
      const delivery = await delivered(seen);
      const answers = await Promise.all([
        follow(on(a, delivery.approveUrl)),
        follow(on(b, delivery.denyUrl), 'denied on B'),
        follow(on(c, delivery.approveUrl)),
        follow(on(b, delivery.approveUrl)),
        follow(on(c, delivery.denyUrl), 'denied on C'),
      ]);
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(answers.length - 1);
      const winner = (await answers[statuses.indexOf(200)]?.json()) as { decision: string };
      const outcome = await result;
      const stood = answered(delivery.id);
      expect(stood).toHaveLength(1);
      expect(stood[0]).toMatchObject({ decision: winner.decision });
      if (winner.decision === 'approved') {
        expect(textOf(outcome)).toBe(`transfer ${before + 1}: ${600 + round} cents to p${round}`);
        expect(await a.api.transfers()).toBe(before + 1);
      } else {
        expect(errorOf(outcome)?.code).toBe('APPROVAL_DECLINED');
        expect(await a.api.transfers()).toBe(before);
      }
    }
  });

  it('a forged or altered link is refused on every replica and leaves the question waiting', async () => {
    const [a, b, c] = (await fleet(3, 'webhook-replicas-forged:')) as [Replica, Replica, Replica];
    const before = await a.api.transfers();
    const seen = deliveries.length;
    const client = await yesClient(a.url, 'legacy');
    open.push(() => client.close());
    const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'mallory', cents: 503 } });
    const delivery = await delivered(seen);
    const token = new URL(delivery.denyUrl).searchParams.get('token') as string;
    const [body, mac] = token.split('.') as [string, string];
    const turned = Buffer.from(Buffer.from(body, 'base64url').toString().replace('denied', 'approved')).toString(
      'base64url',
    );
    const longer = Buffer.from(
      Buffer.from(body, 'base64url')
        .toString()
        .replace(/"e":\d+/, '"e":99999999999999'),
    ).toString('base64url');
    const forged = [`${turned}.${mac}`, `${longer}.${mac}`, `${body}.${mac.slice(1)}A`, `${body}.`, 'x'.repeat(600)];
    for (const replica of [a, b, c])
      for (const token of forged)
        for (const method of ['GET', 'POST']) {
          const link = on(replica, delivery.approveUrl);
          link.searchParams.set('token', token);
          const answer = await fetch(link, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
          expect(answer.status, `${method} ${token.slice(0, 20)} on ${replica.url.host}`).toBe(403);
        }
    for (const replica of [a, b, c]) expect((await replica.api.pending()).map((q) => q.id)).toContain(delivery.id);
    expect(answered(delivery.id)).toHaveLength(0);
    // The genuine link still works, from the third replica.
    expect((await follow(on(c, delivery.denyUrl), 'forged links seen')).status).toBe(200);
    expect(errorOf(await result)?.code).toBe('APPROVAL_DECLINED');
    expect(await a.api.transfers()).toBe(before);
  });

  it('a link whose question lapsed is refused on every replica, and answers nothing', async () => {
    const [a, b] = (await fleet(2, 'webhook-replicas-lapsed:', 1_500)) as [Replica, Replica];
    const before = await a.api.transfers();
    const seen = deliveries.length;
    const client = await yesClient(a.url, 'legacy');
    open.push(() => client.close());
    const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'late', cents: 504 } });
    const delivery = await delivered(seen);
    // The call on A lapses unanswered: its links expire with it.
    expect(errorOf(await result)?.code).toBe('APPROVAL_TIMEOUT');
    for (const replica of [a, b])
      for (const link of [on(replica, delivery.approveUrl), on(replica, delivery.denyUrl)]) {
        const preview = await fetch(link);
        expect(preview.status).toBe(409);
        const answer = await follow(link, 'too late');
        expect(answer.status).toBe(409);
        expect(await answer.json()).toEqual({ error: 'the question lapsed before the answer came' });
      }
    expect(answered(delivery.id)).toHaveLength(0);
    expect(await a.api.transfers()).toBe(before);
  });

  it('does not post a question answered on another replica while its POST waited in the queue', async () => {
    // A receiver that holds each POST open until the test lets it answer.
    const held: http.ServerResponse[] = [];
    const posted: string[] = [];
    const slow = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        posted.push((JSON.parse(body) as Delivery).id);
        held.push(res);
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    open.push(async () => {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    });
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`;
    const [a, b] = (await fleet(2, 'webhook-replicas-queue:', undefined, { url, maxInFlight: 1 })) as [
      Replica,
      Replica,
    ];
    const client = await yesClient(a.url, 'legacy');
    open.push(() => client.close());
    const seen = new Set<string>();
    const first = client.callTool({ name: 'pay_transfer', arguments: { payee: 'first', cents: 701 } });
    first.catch(() => {}); // awaited below; a failure before then must not go unhandled
    const one = await b.api.next(seen);
    await eventually(() => posted.length === 1, "the first question's POST to reach the receiver");
    // The second question waits in A's queue behind the first POST, and is denied on B meanwhile.
    const second = client.callTool({ name: 'pay_transfer', arguments: { payee: 'second', cents: 702 } });
    const two = await b.api.next(seen);
    expect((await b.api.request('/admin/v1/approvals/deny', { id: two.id, reason: 'answered on B' })).status).toBe(200);
    expect(errorOf(await second)?.code).toBe('APPROVAL_DECLINED');
    // The first POST answered, A's queue moves on: the second question is skipped, or posted.
    for (const res of held.splice(0)) res.writeHead(204).end();
    const skipped = () => a.logs.events('approval.webhook.skipped').some((r) => r.id === two.id);
    await eventually(() => skipped() || posted.includes(two.id), 'A to skip or post the answered question');
    for (const res of held.splice(0)) res.writeHead(204).end();
    expect(posted).toEqual([one.id]);
    expect(skipped()).toBe(true);
    expect((await b.api.request('/admin/v1/approvals/approve', { id: one.id })).status).toBe(200);
    expect(textOf(await first)).toContain('701 cents to first');
  });
});
