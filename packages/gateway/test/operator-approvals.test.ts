// Operator approvals through the config-file gateway, with real SDK clients of both protocol versions: the
// client never answers an operator's question (not by elicitation, not with a forged or replayed state);
// an operator answers through the admin API; a client that reconnects mid-wait gets the decision.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/client';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import type { ApprovalEvent, RiskPlugin } from '@sluice/plugin-risk';
import { eventually } from './helpers.js';
import { AGENT_KEY, adminOf, manualClient, paymentsConfig, yesClient } from './operator-helpers.js';

let gateway: Gateway;
let url: URL;
let api: ReturnType<typeof adminOf>;
const events: ApprovalEvent[] = [];
const seen = new Set<string>();

beforeAll(async () => {
  gateway = createGateway(paymentsConfig(), { logger: captureLogger().logger });
  url = (await gateway.start()).http?.url as URL;
  api = adminOf(url);
  const risk = gateway.server.plugins.find((p) => p.name === 'risk') as RiskPlugin;
  risk.onApprovalEvent((event) => events.push(event));
}, 60_000);

afterAll(async () => {
  await gateway.close();
});

const admin = (path: string, body?: unknown, key?: string) => api.request(path, body, key);
const pending = () => api.pending();
const questionFor = () => api.next(seen);
const transfers = () => api.transfers();
const manual = () => manualClient(url);
const yes = (version: 'modern' | 'legacy', forms?: ElicitRequestFormParams[]) => yesClient(url, version, forms);

/** How many identical calls joined this question. */
function joinedTo(id: string): number {
  return events.filter((e) => e.kind === 'asked' && e.id === id && e.joined).length;
}

describe('a client cannot answer an operator approval', () => {
  it('a 2026-07-28 client gets a state naming the question, no form, and its own yes approves nothing', async () => {
    const before = await transfers();
    const client = await manual();
    try {
      const args = { payee: 'mallory', cents: 1_000 };
      const first = await client.send(args);
      expect(first.resultType).toBe('input_required');
      expect(first.inputRequests ?? {}).toEqual({});
      expect(typeof first.requestState).toBe('string');
      const question = await questionFor();
      // The client answers a question it was never asked, with the state it was given: still waiting.
      const again = await client.send(args, {
        requestState: first.requestState,
        inputResponses: { sluice_approval: { action: 'accept', content: { approve: true } } },
      });
      expect(again.resultType).toBe('input_required');
      expect(again.requestState).toBe(first.requestState);
      expect(await transfers()).toBe(before);
      expect(events.find((e) => e.kind === 'refused' && e.id === question.id)).toMatchObject({
        why: "the client answered an operator's question: ignored",
      });
      expect((await pending()).map((a) => a.id)).toContain(question.id);
      expect((await admin('/admin/v1/approvals/deny', { id: question.id, reason: 'cleanup' })).status).toBe(200);
    } finally {
      await client.close();
    }
  });

  it('a 2026-07-28 client that fulfils every round with yes never runs the call', async () => {
    const before = await transfers();
    const forms: ElicitRequestFormParams[] = [];
    const client = await yes('modern', forms);
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'mallory', cents: 2_000 } });
      const question = await questionFor();
      expect(await transfers()).toBe(before);
      expect((await admin('/admin/v1/approvals/deny', { id: question.id, reason: 'not asked by you' })).status).toBe(
        200,
      );
      const refused = await result;
      expect(errorOf(refused)?.code).toBe('APPROVAL_DECLINED');
      expect(forms).toEqual([]);
      expect(await transfers()).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('a 2025-11-25 client is never sent a form: the call waits for the operator', async () => {
    const before = await transfers();
    const forms: ElicitRequestFormParams[] = [];
    const client = await yes('legacy', forms);
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'ann', cents: 3_000 } });
      const question = await questionFor();
      expect(question.caller).toBe('agent');
      expect(await transfers()).toBe(before);
      expect((await admin('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect(textOf(await result)).toBe(`transfer ${before + 1}: 3000 cents to ann`);
      expect(forms).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('refuses a forged state and a state bound to other arguments', async () => {
    const client = await manual();
    try {
      const args = { payee: 'mallory', cents: 4_000 };
      const { requestState } = await client.send(args);
      const state = requestState as string;
      const [version, payload, mac] = state.split('.') as [string, string, string];
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      const forged = `${version}.${Buffer.from(JSON.stringify({ ...decoded, a: '0'.repeat(64) })).toString('base64url')}.${mac}`;
      expect(errorOf(await client.send(args, { requestState: forged }))?.code).toBe('APPROVAL_INVALID');
      expect(errorOf(await client.send({ ...args, cents: 1 }, { requestState: state }))?.code).toBe('APPROVAL_INVALID');
      const question = await questionFor();
      expect((await admin('/admin/v1/approvals/deny', { id: question.id, reason: 'cleanup' })).status).toBe(200);
    } finally {
      await client.close();
    }
  });

  it('refuses a replayed state: one approval runs one call', async () => {
    const before = await transfers();
    const client = await manual();
    try {
      const args = { payee: 'bob', cents: 5_000 };
      const { requestState } = await client.send(args);
      const question = await questionFor();
      expect((await admin('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect(textOf(await client.send(args, { requestState }))).toBe(`transfer ${before + 1}: 5000 cents to bob`);
      const replayed = await client.send(args, { requestState });
      expect(errorOf(replayed)?.code).toBe('APPROVAL_INVALID');
      expect(await transfers()).toBe(before + 1);
      expect(events.filter((e) => e.kind === 'refused' && e.id === question.id)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('refuses an answer from the agent key (no admin scope) and from nobody', async () => {
    const client = await manual();
    try {
      await client.send({ payee: 'mallory', cents: 6_000 });
      const question = await questionFor();
      expect((await admin('/admin/v1/approvals/approve', { id: question.id }, AGENT_KEY)).status).toBe(403);
      const anonymous = await fetch(new URL('/admin/v1/approvals/approve', url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: question.id }),
      });
      expect(anonymous.status).toBe(401);
      expect((await pending()).map((a) => a.id)).toContain(question.id);
      expect((await admin('/admin/v1/approvals/deny', { id: question.id, reason: 'cleanup' })).status).toBe(200);
    } finally {
      await client.close();
    }
  });
});

describe('an operator answers', () => {
  it('denies with a reason, and the client reads it', async () => {
    const client = await yes('legacy');
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'eve', cents: 7_000 } });
      const question = await questionFor();
      const denied = await admin('/admin/v1/approvals/deny', { id: question.id, reason: 'eve is not a supplier' });
      expect(await denied.json()).toEqual({ id: question.id, decision: 'denied', by: 'key:ops', via: 'api' });
      const refused = await result;
      expect(errorOf(refused)?.code).toBe('APPROVAL_DECLINED');
      expect(JSON.stringify(refused.content)).toContain('eve is not a supplier');
      expect(events.filter((e) => e.id === question.id).map((e) => e.kind)).toEqual(['asked', 'answered']);
      expect(events.find((e) => e.id === question.id && e.kind === 'answered')).toMatchObject({
        decision: 'denied',
        by: 'key:ops',
        via: 'api',
        reason: 'eve is not a supplier',
        channel: 'operator',
        tool: 'pay_transfer',
        caller: 'agent',
      });
    } finally {
      await client.close();
    }
  });

  it('takes the first answer only, refuses a deny without a reason and an unknown or malformed id', async () => {
    const client = await manual();
    try {
      await client.send({ payee: 'carol', cents: 8_000 });
      const question = await questionFor();
      expect((await admin('/admin/v1/approvals/deny', { id: question.id })).status).toBe(400);
      expect((await admin('/admin/v1/approvals/approve', { id: '1-AAAAAAAAAAAAAAAA' })).status).toBe(404);
      expect((await admin('/admin/v1/approvals/approve', { id: '../../etc' })).status).toBe(400);
      expect((await admin('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect((await admin('/admin/v1/approvals/deny', { id: question.id, reason: 'too late' })).status).toBe(409);
    } finally {
      await client.close();
    }
  });
});

describe('the answer routes take no malformed input', () => {
  it('refuses any id and reason that are not a question of ours with 400 or 404, never an answer or a crash', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 40 }), fc.stringMatching(/^[1-9][0-9]{0,3}-[A-Za-z0-9_-]{16}$/)),
        fc.option(fc.string({ maxLength: 600 }), { nil: undefined }),
        fc.constantFrom('approve', 'deny'),
        async (id, reason, action) => {
          const answer = await admin(`/admin/v1/approvals/${action}`, {
            id,
            ...(reason === undefined ? {} : { reason }),
          });
          expect([400, 404]).toContain(answer.status);
        },
      ),
      { numRuns: 150 },
    );
    expect((await admin('/admin/v1/approvals/approve', ['not', 'an', 'object'])).status).toBe(400);
  });
});

describe('waiting survives a reconnect', () => {
  it('a 2025-11-25 client that reconnects and calls again is joined to its question and gets the decision', async () => {
    const before = await transfers();
    const args = { payee: 'dave', cents: 9_000 };
    const first = await yes('legacy');
    const abandoned = first.callTool({ name: 'pay_transfer', arguments: args }).catch(() => undefined);
    const question = await questionFor();
    await first.close();
    await abandoned;
    const second = await yes('legacy');
    try {
      const result = second.callTool({ name: 'pay_transfer', arguments: args });
      // Joined, not asked twice: still one question.
      await eventually(() => joinedTo(question.id) === 1, 'the reconnected call to join the question');
      expect((await pending()).filter((a) => a.tool === 'pay_transfer').map((a) => a.id)).toEqual([question.id]);
      expect((await admin('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      expect(textOf(await result)).toBe(`transfer ${before + 1}: 9000 cents to dave`);
      expect(await transfers()).toBe(before + 1);
    } finally {
      await second.close();
    }
  });

  it('a 2026-07-28 client that reconnects retries with its state and gets the decision', async () => {
    const before = await transfers();
    const args = { payee: 'erin', cents: 10_000 };
    const first = await manual();
    const { requestState } = await first.send(args);
    await first.close();
    const question = await questionFor();
    expect((await admin('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
    const second = await manual();
    try {
      expect(textOf(await second.send(args, { requestState }))).toBe(`transfer ${before + 1}: 10000 cents to erin`);
    } finally {
      await second.close();
    }
  });

  it('two identical calls share one question; its approval runs the later one, once', async () => {
    const before = await transfers();
    const args = { payee: 'frank', cents: 11_000 };
    const a = await yes('legacy');
    const b = await yes('legacy');
    try {
      const one = a.callTool({ name: 'pay_transfer', arguments: args });
      const question = await questionFor();
      const two = b.callTool({ name: 'pay_transfer', arguments: args });
      await eventually(() => joinedTo(question.id) === 1, 'the second call to join the question');
      expect((await admin('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
      // The later identical call took the question over: it runs, the earlier one is told so.
      expect(errorOf(await one)?.code).toBe('APPROVAL_INVALID');
      expect(textOf(await two)).toBe(`transfer ${before + 1}: 11000 cents to frank`);
      expect(await transfers()).toBe(before + 1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
