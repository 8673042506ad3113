// The approval webhook against a local receiver: a new operator question is POSTed, signed, with one-time
// approve and deny links; the receiver checks the signature and follows a link, and the waiting call gets
// the decision. A forged, altered or reused link answers nothing.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { adminOf, paymentsConfig, yesClient } from './operator-helpers.js';

const SECRET = 'webhook-secret-for-the-receiver-0123456789';

interface Delivery {
  readonly body: string;
  readonly signature: string;
  readonly payload: {
    id: string;
    tool: string;
    message: string;
    caller: string;
    approveUrl: string;
    denyUrl: string;
  };
}

let receiver: Server;
let receiverPort: number;
let gateway: Gateway;
let url: URL;
let api: ReturnType<typeof adminOf>;
const deliveries: Delivery[] = [];
const waiters: Array<() => void> = [];

/** What a receiver does first: recompute the signature over `<t>.<body>` and compare in constant time. */
function verified(body: string, header: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (match === null) return false;
  const expected = createHmac('sha256', SECRET).update(`${match[1]}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2] as string, 'hex'));
}

async function nextDelivery(count: number): Promise<Delivery> {
  while (deliveries.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
  return deliveries[count - 1] as Delivery;
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const signature = String(req.headers['x-sluice-signature'] ?? '');
      deliveries.push({ body, signature, payload: JSON.parse(body) as Delivery['payload'] });
      for (const wake of waiters.splice(0)) wake();
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  receiverPort = port;
  const config = paymentsConfig();
  gateway = createGateway(
    {
      ...config,
      admin: { scopes: ['admin'], webhook: { url: `http://127.0.0.1:${port}/hooks/sluice`, secret: SECRET } },
    },
    { logger: captureLogger().logger },
  );
  url = (await gateway.start()).http?.url as URL;
  api = adminOf(url);
}, 60_000);

afterAll(async () => {
  await gateway.close();
  await new Promise((resolve) => receiver.close(resolve));
});

describe('the approval webhook', () => {
  it('posts a signed question; the receiver approves through its link and the waiting call runs, once', async () => {
    const before = await api.transfers();
    const client = await yesClient(url, 'legacy');
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'acme', cents: 77 } });
      const delivery = await nextDelivery(1);
      expect(verified(delivery.body, delivery.signature)).toBe(true);
      expect(verified(delivery.body.replace('acme', 'evil'), delivery.signature)).toBe(false);
      expect(delivery.payload).toMatchObject({
        tool: 'pay_transfer',
        caller: 'agent',
        message: expect.stringContaining('{"payee":"acme","cents":77}') as unknown,
      });
      // Following the link with GET (a link preview) shows a page and answers nothing.
      const preview = await fetch(delivery.payload.approveUrl);
      expect(preview.status).toBe(200);
      expect(await preview.text()).toContain('Approve the call waiting as question');
      expect((await api.pending()).map((a) => a.id)).toContain(delivery.payload.id);

      const answered = await fetch(delivery.payload.approveUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(await answered.json()).toEqual({
        id: delivery.payload.id,
        decision: 'approved',
        by: `webhook:127.0.0.1:${receiverPort}`,
        via: 'webhook',
      });
      expect(textOf(await result)).toBe(`transfer ${before + 1}: 77 cents to acme`);
      // Used once: the deny link of the same question, and the approve link again, answer nothing.
      const again = await fetch(delivery.payload.approveUrl, { method: 'POST', body: '{}' });
      expect(again.status).toBe(409);
      const deny = await fetch(delivery.payload.denyUrl, { method: 'POST', body: JSON.stringify({ reason: 'no' }) });
      expect(deny.status).toBe(409);
    } finally {
      await client.close();
    }
  });

  it('denies with the reason the receiver gives; a forged or altered link is refused', async () => {
    const client = await yesClient(url, 'legacy');
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'eve', cents: 78 } });
      const { payload } = await nextDelivery(2);
      const link = new URL(payload.denyUrl);
      const token = link.searchParams.get('token') as string;
      const [body, mac] = token.split('.') as [string, string];
      const turned = Buffer.from(Buffer.from(body, 'base64url').toString().replace('denied', 'approved')).toString(
        'base64url',
      );
      link.searchParams.set('token', `${turned}.${mac}`);
      expect((await fetch(link, { method: 'POST', body: '{}' })).status).toBe(403);
      link.searchParams.set('token', 'x'.repeat(10_000));
      expect((await fetch(link, { method: 'POST', body: '{}' })).status).toBe(403);
      // A denial needs its reason.
      expect((await fetch(payload.denyUrl, { method: 'POST', body: '{}' })).status).toBe(400);
      const denied = await fetch(payload.denyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ reason: 'eve is not a supplier' }).toString(),
      });
      expect(denied.status).toBe(200);
      const refused = await result;
      expect(errorOf(refused)?.code).toBe('APPROVAL_DECLINED');
      expect(JSON.stringify(refused.content)).toContain('eve is not a supplier');
    } finally {
      await client.close();
    }
  });

  it('answers nothing for a link it did not make: any token is a 403, never an answer or a crash', async () => {
    const before = (await api.pending()).length;
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 600 }), fc.constantFrom('GET', 'POST'), async (token, method) => {
        const link = new URL('/admin/v1/approvals/answer', url);
        link.searchParams.set('token', token);
        const answer = await fetch(link, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
        expect(answer.status).toBe(403);
      }),
      { numRuns: 150 },
    );
    expect((await api.pending()).length).toBe(before);
  });
});
