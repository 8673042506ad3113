// The approval webhook against a slow receiver (a real loopback HTTP server that answers only when the test
// lets it): never more than `maxInFlight` POSTs open at once, at most `maxQueued` more waiting in memory, and
// every question past that dropped with a logged `approval.webhook.dropped` naming it; nothing unbounded.
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogger } from '@sluice/testing';
import type { CapturedLogger } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { ApprovalEvent } from '@sluice/plugin-risk';
import { ApprovalWebhook } from '../src/admin/webhook.js';
import { AGENT_KEY, paymentsConfig } from './operator-helpers.js';
import { eventually } from './helpers.js';

const SECRET = 'webhook-queue-secret-for-the-receiver-0123';

/** A receiver that holds every POST open until `release()`, and remembers how many were open at most. */
interface SlowReceiver {
  readonly url: string;
  readonly ids: string[];
  open(): number;
  maxOpen(): number;
  /** Answers every POST held now. */
  release(): void;
  close(): Promise<void>;
}

async function slowReceiver(): Promise<SlowReceiver> {
  const held: ServerResponse[] = [];
  const ids: string[] = [];
  let maxOpen = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      ids.push((JSON.parse(body) as { id: string }).id);
      held.push(res);
      maxOpen = Math.max(maxOpen, held.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    ids,
    open: () => held.length,
    maxOpen: () => maxOpen,
    release: () => {
      for (const res of held.splice(0)) res.writeHead(204).end();
    },
    close: async () => {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const open: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

function asked(n: number): ApprovalEvent {
  const at = Date.now();
  return {
    kind: 'asked',
    joined: false,
    channel: 'operator',
    id: `${n}-${'a'.repeat(16)}`,
    tool: 'pay_transfer',
    server: 'pay',
    level: 'L4',
    caller: 'reader',
    at,
    reason: 'risk L4',
    message: `Approve transfer ${n}?`,
    expiresAt: at + 600_000,
  };
}

/** Lets the receiver answer, round after round, until `delivered` POSTs were logged as sent. */
async function drain(receiver: SlowReceiver, logs: CapturedLogger, delivered: number): Promise<void> {
  await eventually(() => {
    receiver.release();
    return logs.events('approval.webhook.sent').length >= delivered;
  }, `${delivered} webhook deliveries`);
}

describe('the approval webhook under a flood', () => {
  it('keeps at most maxInFlight POSTs open and maxQueued waiting, and drops the rest with a logged event', async () => {
    const receiver = await slowReceiver();
    open.push(() => receiver.close());
    const logs = captureLogger();
    const webhook = new ApprovalWebhook(
      { url: receiver.url, secret: SECRET, timeoutMs: 60_000, maxInFlight: 2, maxQueued: 3 },
      () => new URL('http://127.0.0.1:1/'),
      () => Promise.resolve({ ok: true }),
      () => Promise.resolve(true),
      logs.logger,
    );
    for (let n = 1; n <= 20; n++) webhook.notify(asked(n));

    const dropped = logs.events('approval.webhook.dropped');
    expect(dropped.map((r) => r.id)).toEqual(Array.from({ length: 15 }, (_, i) => asked(i + 6).id));
    await eventually(() => receiver.open() === 2, 'two POSTs open at the receiver');
    await drain(receiver, logs, 5);
    expect(receiver.ids).toEqual([1, 2, 3, 4, 5].map((n) => asked(n).id));
    expect(receiver.maxOpen()).toBe(2);
    expect(webhook.backlog()).toEqual({ inFlight: 0, queued: 0 });
  });

  it('does not post a question answered (or lapsed) while its POST waited in the queue', async () => {
    const receiver = await slowReceiver();
    open.push(() => receiver.close());
    const logs = captureLogger();
    const webhook = new ApprovalWebhook(
      { url: receiver.url, secret: SECRET, timeoutMs: 60_000, maxInFlight: 1, maxQueued: 3 },
      () => new URL('http://127.0.0.1:1/'),
      () => Promise.resolve({ ok: true }),
      () => Promise.resolve(true),
      logs.logger,
    );
    for (let n = 1; n <= 4; n++) webhook.notify(asked(n));
    const { channel, tool, server, level, caller, at } = asked(2);
    const subject = { channel, tool, server, level, caller, at, id: asked(2).id };
    webhook.notify({ ...subject, kind: 'answered', decision: 'denied', by: 'ops', via: 'console', reason: undefined });
    webhook.notify({ ...subject, id: asked(3).id, kind: 'lapsed' });
    expect(webhook.backlog()).toEqual({ inFlight: 1, queued: 1 });
    expect(logs.events('approval.webhook.skipped').map((r) => r.id)).toEqual([asked(2).id, asked(3).id]);
    await drain(receiver, logs, 2);
    expect(receiver.ids).toEqual([asked(1).id, asked(4).id]);
  });

  it('asks the store before posting a question that waited: not posted once it no longer waits, posted if unsure', async () => {
    const receiver = await slowReceiver();
    open.push(() => receiver.close());
    const logs = captureLogger();
    const asks: string[] = [];
    // Question 2 was answered on another replica; the store cannot say about question 3.
    const waiting = (id: string): Promise<boolean> => {
      asks.push(id);
      if (id === asked(2).id) return Promise.resolve(false);
      if (id === asked(3).id) return Promise.reject(new Error('the store is out of reach'));
      return Promise.resolve(true);
    };
    const webhook = new ApprovalWebhook(
      { url: receiver.url, secret: SECRET, timeoutMs: 60_000, maxInFlight: 1, maxQueued: 3 },
      () => new URL('http://127.0.0.1:1/'),
      () => Promise.resolve({ ok: true }),
      waiting,
      logs.logger,
    );
    for (let n = 1; n <= 4; n++) webhook.notify(asked(n));
    await drain(receiver, logs, 3);
    expect(receiver.ids).toEqual([asked(1).id, asked(3).id, asked(4).id]);
    expect(logs.events('approval.webhook.skipped').map((r) => r.id)).toEqual([asked(2).id]);
    // Only the questions that waited were looked up; the first went out at once.
    expect(asks).toEqual([2, 3, 4].map((n) => asked(n).id));
  });

  it('a gateway posts no more than admin.webhook.maxInFlight at once for a flood of operator questions', async () => {
    const receiver = await slowReceiver();
    open.push(() => receiver.close());
    const logs = captureLogger();
    const gateway = createGateway(
      {
        ...paymentsConfig(),
        admin: { scopes: ['admin'], webhook: { url: receiver.url, secret: SECRET, maxInFlight: 1, maxQueued: 1 } },
      },
      { logger: logs.logger },
    );
    open.push(() => gateway.close());
    const url = (await gateway.start()).http?.url as URL;
    const client = new Client(
      { name: 'flood', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { autoFulfill: false } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${AGENT_KEY}` } } }),
    );
    open.push(() => client.close());
    for (let i = 0; i < 4; i++) {
      const round = (await client.callTool(
        { name: 'pay_transfer', arguments: { payee: `p${i}`, cents: i + 1 } },
        { allowInputRequired: true },
      )) as { resultType?: string };
      expect(round.resultType).toBe('input_required');
    }
    // One POST open, one waiting, two dropped: each asked question was handed to the webhook before its answer.
    expect(logs.events('approval.webhook.dropped')).toHaveLength(2);
    await drain(receiver, logs, 2);
    expect(receiver.ids).toHaveLength(2);
    expect(receiver.maxOpen()).toBe(1);
  });
});
