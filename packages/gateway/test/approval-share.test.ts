// One caller flooding a gateway with approval questions (the security review's reproduction, memory store):
// past its share of waiting questions each new one is refused with APPROVAL_BUSY, appending nothing more to
// the audit log than one entry, while another caller's question is still asked, listed by the admin API and
// answered; a question that is answered stops counting against its caller's share.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { OPS_KEY, adminOf, paymentsConfig } from './operator-helpers.js';
import type { Round } from './operator-helpers.js';

const VICTIM_KEY = 'approval-share-victim-key-0123456';
const READER_KEY = 'approval-share-reader-key-0123456';

let gateway: Gateway;
let url: URL;
let api: ReturnType<typeof adminOf>;
const clients: Client[] = [];

/** A real SDK client of the given protocol version, calling as the given key; 2026-07-28 rounds come back by hand. */
async function clientAs(key: string, version: 'legacy' | 'modern'): Promise<Client> {
  const client = new Client(
    { name: `share-${version}`, version: '1.0.0' },
    version === 'modern'
      ? { versionNegotiation: { mode: { pin: '2026-07-28' } }, inputRequired: { autoFulfill: false } }
      : {},
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

/** The audit log's entries, as the operator reads them. */
async function auditEntries(): Promise<Array<Record<string, unknown>>> {
  const text = await (await api.request('/admin/v1/audit?limit=10000')).text();
  return text
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(async () => {
  const config = paymentsConfig({
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
    audit: { maxEntries: 1_000 },
  });
  gateway = createGateway(config, { logger: captureLogger().logger });
  url = (await gateway.start()).http?.url as URL;
  api = adminOf(url);
}, 60_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await gateway.close();
});

describe("a caller's share of approval questions", () => {
  it("refuses a flooding caller past its share, while another caller's question is asked, listed and answered", async () => {
    const victim = await clientAs(VICTIM_KEY, 'legacy');
    const waiting = victim.callTool(
      { name: 'pay_transfer', arguments: { payee: 'victim', cents: 1 } },
      { timeout: 600_000 },
    );
    waiting.catch(() => {}); // awaited below; a failed assertion before then must not leave it unhandled
    const question = await api.next(new Set());
    expect(question.caller).toBe('victim');

    // 600 calls with distinct arguments, 20 at a time: each asks a new question, or is refused.
    const reader = await clientAs(READER_KEY, 'modern');
    const answers: Answer[] = [];
    for (let i = 0; i < 600; i += 20)
      answers.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => transfer(reader, `spam-${i + j}`)))));
    const asked = answers.filter((a) => a.resultType === 'input_required');
    const refused = answers.filter((a) => a.resultType !== 'input_required');
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(errorOf(answer)?.code).toBe('APPROVAL_BUSY');
      expect(textOf(answer)).toMatch(/waiting/);
    }
    expect(asked.length).toBeLessThan(100);

    // Every question the reader was asked is listed, and so is the victim's, which the operator answers.
    const listed = await api.pending();
    expect(listed.map((q) => q.id)).toContain(question.id);
    const readerIds = asked.map((a) => a._meta?.['dev.sluice/approval']?.question);
    expect(listed.filter((q) => q.caller === 'reader').map((q) => q.id)).toEqual(readerIds);
    expect((await api.request('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
    expect(textOf(await waiting)).toBe('transfer 1: 1 cents to victim');

    // The refusals did not flush the audit log: one entry says the reader was over its share.
    const entries = await auditEntries();
    const readers = entries.filter((e) => e.caller === 'reader');
    expect(readers.filter((e) => e.kind === 'approval.asked')).toHaveLength(asked.length);
    const busy = readers.filter((e) => e.kind === 'approval.refused');
    expect(busy).toHaveLength(1);
    expect(busy[0]).toMatchObject({ decision: 'busy', channel: 'operator' });
    expect(entries.some((e) => e.kind === 'approval.asked' && e.approval === question.id)).toBe(true);
  });

  it('counts a question no more once the operator answered it', async () => {
    const reader = await clientAs(READER_KEY, 'modern');
    expect(errorOf(await transfer(reader, 'still-over'))?.code).toBe('APPROVAL_BUSY');
    const [oldest] = (await api.pending()).filter((q) => q.caller === 'reader');
    expect((await api.request('/admin/v1/approvals/deny', { id: oldest?.id, reason: 'no spam' })).status).toBe(200);
    expect((await transfer(reader, 'room-again')).resultType).toBe('input_required');
    expect(errorOf(await transfer(reader, 'over-again'))?.code).toBe('APPROVAL_BUSY');
  });
});
