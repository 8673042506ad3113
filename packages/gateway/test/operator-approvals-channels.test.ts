// The other channel shapes through the gateway: `client-then-operator` needs both the client's person and
// an operator; an operator question nobody answers lapses, and the waiting call is told so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/client';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import type { ApprovalEvent, RiskPlugin } from '@sluice/plugin-risk';
import { eventually } from './helpers.js';
import { AGENT_KEY, adminOf, manualClient, paymentsConfig, yesClient } from './operator-helpers.js';

const events: ApprovalEvent[] = [];
const seen = new Set<string>();
const gateways: Gateway[] = [];

/** A gateway whose `pay_transfer` asks the client, then an operator, who has `timeoutMs` to answer. */
async function start(timeoutMs: number): Promise<{ url: URL; api: ReturnType<typeof adminOf> }> {
  const gateway = createGateway(
    {
      ...paymentsConfig(),
      plugins: {
        risk: {
          ledger: { persist: 'memory' },
          approval: { secret: 'operator-approvals-secret-0123456789', operator: { holdMs: 200 }, timeoutMs },
          tools: [
            { match: 'pay_transfer', hitl: true, approvalChannel: 'client-then-operator' },
            { match: 'pay_transfers', hitl: false },
          ],
        },
      },
    },
    { logger: captureLogger().logger },
  );
  gateways.push(gateway);
  const url = (await gateway.start()).http?.url as URL;
  (gateway.server.plugins.find((p) => p.name === 'risk') as RiskPlugin).onApprovalEvent((e) => events.push(e));
  return { url, api: adminOf(url) };
}

let url: URL;
let api: ReturnType<typeof adminOf>;
/** Where nobody answers in time. */
let hasty: { url: URL; api: ReturnType<typeof adminOf> };

beforeAll(async () => {
  ({ url, api } = await start(300_000));
  hasty = await start(1_000);
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
});

/** A 2025-11-25 client whose person declines every form. */
async function noClient(): Promise<Client> {
  const client = new Client({ name: 'no', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', () => Promise.resolve({ action: 'decline' as const }));
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${AGENT_KEY}` } } }),
  );
  return client;
}

describe('client-then-operator', () => {
  it('asks the 2025-11-25 client first, then the operator; both approve and the call runs', async () => {
    const before = await api.transfers();
    const forms: ElicitRequestFormParams[] = [];
    const client = await yesClient(url, 'legacy', forms);
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'acme', cents: 1 } });
      const question = await api.next(seen);
      expect(forms).toHaveLength(1);
      expect(await api.transfers()).toBe(before);
      expect((await api.request('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect(textOf(await result)).toBe(`transfer ${before + 1}: 1 cents to acme`);
      const kinds = events.filter((e) => e.tool === 'pay_transfer').map((e) => `${e.channel}:${e.kind}`);
      expect(kinds.slice(-3)).toEqual(['client:answered', 'operator:asked', 'operator:answered']);
    } finally {
      await client.close();
    }
  });

  it("a client's decline ends it: the operator is never asked", async () => {
    const client = await noClient();
    try {
      const operatorAsked = () => events.filter((e) => e.kind === 'asked' && e.channel === 'operator');
      const asked = operatorAsked().length;
      const refused = await client.callTool({ name: 'pay_transfer', arguments: { payee: 'acme', cents: 2 } });
      expect(errorOf(refused)?.code).toBe('APPROVAL_DECLINED');
      expect(operatorAsked()).toHaveLength(asked);
    } finally {
      await client.close();
    }
  });

  it('a 2026-07-28 client answers its form, then retries with the state naming the operator question', async () => {
    const before = await api.transfers();
    const client = await manualClient(url);
    try {
      const args = { payee: 'globex', cents: 3 };
      const first = await client.send(args);
      expect(Object.keys(first.inputRequests ?? {})).toEqual(['sluice_approval']);
      const second = await client.send(args, {
        requestState: first.requestState,
        inputResponses: { sluice_approval: { action: 'accept', content: { approve: true } } },
      });
      expect(second.resultType).toBe('input_required');
      expect(second.inputRequests ?? {}).toEqual({});
      expect(second.requestState).not.toBe(first.requestState);
      const question = await api.next(seen);
      // The client's spent state cannot skip the operator.
      expect(errorOf(await client.send(args, { requestState: first.requestState }))?.code).toBe('APPROVAL_INVALID');
      expect((await api.request('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect(textOf(await client.send(args, { requestState: second.requestState }))).toBe(
        `transfer ${before + 1}: 3 cents to globex`,
      );
    } finally {
      await client.close();
    }
  });
});

describe('an operator question nobody answers', () => {
  it('lapses: the 2025-11-25 call is told it timed out, the question leaves the list, a late answer is refused', async () => {
    const client = await yesClient(hasty.url, 'legacy');
    try {
      const refused = await client.callTool({ name: 'pay_transfer', arguments: { payee: 'late', cents: 4 } });
      expect(errorOf(refused)?.code).toBe('APPROVAL_TIMEOUT');
      const lapsed = events.find((e) => e.kind === 'lapsed' && e.channel === 'operator');
      expect(lapsed).toBeDefined();
      const id = lapsed?.id as string;
      expect((await hasty.api.pending()).map((a) => a.id)).not.toContain(id);
      const late = await hasty.api.request('/admin/v1/approvals/approve', { id });
      expect(late.status).toBe(409);
    } finally {
      await client.close();
    }
  });

  it('lapses for a 2026-07-28 client that keeps retrying', async () => {
    const client = await manualClient(hasty.url);
    try {
      const args = { payee: 'later', cents: 5 };
      const first = await client.send(args);
      let state = first.requestState;
      const answer = await client.send(args, {
        requestState: state,
        inputResponses: { sluice_approval: { action: 'accept', content: { approve: true } } },
      });
      state = answer.requestState;
      let last = answer;
      await eventually(async () => {
        last = await client.send(args, { requestState: state });
        return last.resultType !== 'input_required';
      }, 'the question to lapse');
      expect(errorOf(last)?.code).toBe('APPROVAL_TIMEOUT');
    } finally {
      await client.close();
    }
  });
});
