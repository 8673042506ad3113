import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Tokens } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import { errorOf, textOf } from '@sluice/testing';
import { RiskErrorCode, RiskEvent } from '@sluice/plugin-risk';
import type { ApprovalServer, Connected, ManualClient } from './approval-helpers.js';
import {
  accept,
  approvalServer,
  closeAfterEach,
  legacyClient,
  legacyHttpClient,
  manualClient,
  modernClient,
  no,
  yes,
} from './approval-helpers.js';
import { official, upstream } from './helpers.js';
import '@sluice/http';
import '@sluice/upstream';

const track = closeAfterEach();

async function start(options: Parameters<typeof approvalServer>[0] = {}): Promise<ApprovalServer> {
  return track(await approvalServer(options));
}

async function listen(s: ApprovalServer): Promise<URL> {
  return (await s.server.listen()).url;
}

function isAcceptedYes(answer: unknown): boolean {
  const a = answer as { action?: unknown; content?: { approve?: unknown } } | null;
  return (
    typeof a === 'object' && a !== null && !Array.isArray(a) && a.action === 'accept' && a.content?.approve === true
  );
}

function refusedWith(result: CallToolResult, code: string): void {
  expect(result.isError).toBe(true);
  expect(errorOf(result)?.code).toBe(code);
  expect(textOf(result)).toContain(`<error_code>${code}</error_code>`);
}

describe('approval of arguments longer than the form shows', () => {
  it('shows the person a field that follows a long one', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, yes));
    expect(textOf(await client.call('deploy', { note: 'n'.repeat(3_000), env: 'prod' }))).toBe('deployed to prod');
    expect(client.forms).toHaveLength(1);
    expect(client.forms[0]?.message).toContain('env: "prod"');
  });

  it('refuses without asking anybody when the fields cannot all be shown', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, yes));
    const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`extra${i}`, `value ${i}`]));
    refusedWith(await client.call('deploy', { ...many, env: 'prod' }), RiskErrorCode.APPROVAL_UNAVAILABLE);
    expect(client.forms).toHaveLength(0);
    expect(s.runs()).toBe(0);
  });
});

describe('approval on a 2025-11-25 client (elicitation)', () => {
  it('runs the tool when the person approves', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, yes));
    expect(textOf(await client.call('deploy', { env: 'prod' }))).toBe('deployed to prod');
    expect(s.runs()).toBe(1);
    expect(s.logs.events(RiskEvent.APPROVAL_REQUESTED)).toMatchObject([
      { tool: 'deploy', server: 'local', level: 'L0', via: 'elicitation' },
    ]);
    expect(s.logs.events(RiskEvent.APPROVAL_DECIDED)).toMatchObject([{ tool: 'deploy', decision: 'approved' }]);
  });

  it('refuses with APPROVAL_DECLINED, an isError result telling the model a person declined, when the person declines', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, no));
    const result = await client.call('deploy', { env: 'prod' });
    refusedWith(result, RiskErrorCode.APPROVAL_DECLINED);
    expect(textOf(result)).toContain('A person declined to approve this call of "deploy"');
    expect(s.runs()).toBe(0);
  });

  it('refuses with APPROVAL_DECLINED when the form comes back accepted but without yes', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, () => ({ action: 'accept', content: { approve: false } })));
    refusedWith(await client.call('deploy', { env: 'prod' }), RiskErrorCode.APPROVAL_DECLINED);
    expect(s.runs()).toBe(0);
  });

  it('refuses with APPROVAL_CANCELLED when the person dismisses the form', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, () => ({ action: 'cancel' })));
    refusedWith(await client.call('deploy', { env: 'prod' }), RiskErrorCode.APPROVAL_CANCELLED);
    expect(s.runs()).toBe(0);
  });

  it('refuses with APPROVAL_TIMEOUT when nobody answers within approval.timeoutMs', async () => {
    const s = await start({ approval: { timeoutMs: 100 } });
    const client = track(await legacyClient(s.server, () => 'hang'));
    refusedWith(await client.call('deploy', { env: 'prod' }), RiskErrorCode.APPROVAL_TIMEOUT);
    expect(s.runs()).toBe(0);
    expect(s.logs.events(RiskEvent.APPROVAL_DECIDED)).toMatchObject([{ decision: 'timeout' }]);
  });

  it('refuses with APPROVAL_UNAVAILABLE, not a protocol error, when the client declared no elicitation', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, yes, { elicitation: false }));
    const result = await client.call('deploy', { env: 'prod' });
    refusedWith(result, RiskErrorCode.APPROVAL_UNAVAILABLE);
    expect(textOf(result)).toContain('nobody could be asked');
    expect(s.runs()).toBe(0);
  });

  it('asks over HTTP too, where the core gives the client a session', async () => {
    const s = await start();
    const client = track(await legacyHttpClient(await listen(s), yes));
    expect(textOf(await client.call('deploy', { env: 'staging' }))).toBe('deployed to staging');
    expect(client.forms).toHaveLength(1);
  });

  it('shows one boolean and nothing to type a secret into: the tool, its risk level and its arguments, capped', async () => {
    const s = await start({ approval: { maxArgumentChars: 40 } });
    const client = track(await legacyClient(s.server, yes));
    await client.call('deploy', { env: 'prod', note: 'x'.repeat(500) });
    const [form] = client.forms;
    expect(form?.requestedSchema).toEqual({
      type: 'object',
      properties: { approve: expect.objectContaining({ type: 'boolean', default: false }) as unknown },
      required: ['approve'],
    });
    expect(form?.message).toContain('"deploy"');
    expect(form?.message).toContain('Risk L0 (Verified)');
    // Past the cap every field is still shown, the long one shortened on its own.
    expect(form?.message).toContain('Arguments: env: "prod"; note: "xxxxx');
    expect(form?.message).toMatch(/…$/);
    expect(form?.message.length).toBeLessThan(200);
  });

  it('spells out characters in the arguments that would hide or reorder what the person reads', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, no));
    await client.call('deploy', { env: 'prod\u202e\u200bstaging' });
    expect(client.forms[0]?.message).toContain('prod\\u202e\\u200bstaging');
    expect(client.forms[0]?.message).not.toMatch(/[\u202e\u200b]/);
  });

  it('lets tools that do not ask run without a form', async () => {
    const s = await start();
    const client = track(await legacyClient(s.server, no));
    expect(textOf(await client.call('status'))).toBe('up');
    expect(client.forms).toEqual([]);
  });
});

describe('approval on a 2026-07-28 client (input-required round trip)', () => {
  it('runs the tool when the person approves: the client fulfils the round and retries', async () => {
    const s = await start();
    const client = track(await modernClient(await listen(s), yes));
    expect(textOf(await client.call('deploy', { env: 'prod' }))).toBe('deployed to prod');
    expect(s.runs()).toBe(1);
    expect(client.forms).toHaveLength(1);
    expect(s.logs.events(RiskEvent.APPROVAL_REQUESTED)).toMatchObject([{ tool: 'deploy', via: 'input-required' }]);
    expect(s.logs.events(RiskEvent.APPROVAL_DECIDED)).toMatchObject([{ tool: 'deploy', decision: 'approved' }]);
  });

  it('refuses with APPROVAL_DECLINED when the person declines', async () => {
    const s = await start();
    const client = track(await modernClient(await listen(s), no));
    refusedWith(await client.call('deploy', { env: 'prod' }), RiskErrorCode.APPROVAL_DECLINED);
    expect(s.runs()).toBe(0);
  });

  it('refuses with APPROVAL_UNAVAILABLE, not the -32021 protocol error, when the client declared no elicitation', async () => {
    const s = await start();
    const client = track(await modernClient(await listen(s), yes, { elicitation: false }));
    refusedWith(await client.call('deploy', { env: 'prod' }), RiskErrorCode.APPROVAL_UNAVAILABLE);
    expect(s.runs()).toBe(0);
  });

  describe('a retry crafted by hand', () => {
    let s: ApprovalServer;
    let client: ManualClient;
    const args = { env: 'prod' };

    async function setUp(options: Parameters<typeof approvalServer>[0] = {}): Promise<void> {
      s = await start(options);
      client = track(await manualClient(await listen(s)));
    }

    it('answers the first round with one form request and a sealed state', async () => {
      await setUp();
      const first = await client.first('deploy', args);
      expect(first.resultType).toBe('input_required');
      expect(Object.keys(first.inputRequests)).toEqual(['sluice_approval']);
      expect(first.inputRequests.sluice_approval).toMatchObject({
        method: 'elicitation/create',
        params: { mode: 'form' },
      });
      expect(first.requestState).toMatch(/^s1\.[\w-]+\.[\w-]{43}$/);
      expect(s.runs()).toBe(0);
    });

    it('runs the tool on an honest retry', async () => {
      await setUp();
      const { requestState } = await client.first('deploy', args);
      expect(textOf(await client.retry('deploy', args, requestState, accept))).toBe('deployed to prod');
      expect(s.runs()).toBe(1);
    });

    it('refuses a replayed state with APPROVAL_INVALID: an approval runs its call once', async () => {
      await setUp();
      const { requestState } = await client.first('deploy', args);
      expect(textOf(await client.retry('deploy', args, requestState, accept))).toBe('deployed to prod');
      const replay = await client.retry('deploy', args, requestState, accept);
      refusedWith(replay, RiskErrorCode.APPROVAL_INVALID);
      expect(textOf(replay)).toContain('already used');
      expect(s.runs()).toBe(1);
    });

    it('refuses a tampered state with APPROVAL_INVALID', async () => {
      await setUp();
      const { requestState } = await client.first('deploy', args);
      const [version, payload, mac] = requestState.split('.') as [string, string, string];
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...decoded, e: (decoded.e as number) + 3_600_000 })).toString(
        'base64url',
      );
      for (const state of [
        `${version}.${forged}.${mac}`,
        // The seal's last two characters changed (to AA, or to BB when they were AA: one state in 4,096 ends so).
        `${version}.${payload}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`,
        'not a state',
      ]) {
        refusedWith(await client.retry('deploy', args, state, accept), RiskErrorCode.APPROVAL_INVALID);
      }
      expect(s.runs()).toBe(0);
    });

    it('refuses a state minted for other arguments, or another tool, with APPROVAL_INVALID', async () => {
      await setUp();
      s.server.tool({
        name: 'destroy',
        policy: { risk: { hitl: true } },
        handler: () => ({ content: [{ type: 'text', text: 'gone' }] }),
      });
      await s.server.ready();
      const { requestState } = await client.first('deploy', { env: 'staging' });
      refusedWith(await client.retry('deploy', { env: 'prod' }, requestState, accept), RiskErrorCode.APPROVAL_INVALID);
      const other = await client.first('deploy', args);
      refusedWith(await client.retry('destroy', args, other.requestState, accept), RiskErrorCode.APPROVAL_INVALID);
      expect(s.runs()).toBe(0);
    });

    it('refuses an answer that comes without the state, and a state that comes without an answer', async () => {
      await setUp();
      refusedWith(await client.retry('deploy', args, undefined, accept), RiskErrorCode.APPROVAL_INVALID);
      const { requestState } = await client.first('deploy', args);
      refusedWith(await client.retry('deploy', args, requestState, undefined), RiskErrorCode.APPROVAL_INVALID);
      expect(s.runs()).toBe(0);
    });

    it('refuses with APPROVAL_TIMEOUT when the retry comes after approval.timeoutMs', async () => {
      await setUp({ approval: { timeoutMs: 60_000 } });
      const { requestState } = await client.first('deploy', args);
      s.clock.advance(60_001);
      refusedWith(await client.retry('deploy', args, requestState, accept), RiskErrorCode.APPROVAL_TIMEOUT);
      expect(s.runs()).toBe(0);
    });

    it('refuses a decline carried by the retry, and spends its state', async () => {
      await setUp();
      const { requestState } = await client.first('deploy', args);
      refusedWith(
        await client.retry('deploy', args, requestState, { action: 'decline' }),
        RiskErrorCode.APPROVAL_DECLINED,
      );
      refusedWith(await client.retry('deploy', args, requestState, accept), RiskErrorCode.APPROVAL_INVALID);
      expect(s.runs()).toBe(0);
    });

    it('accepts a state sealed by another process that holds the same approval.secret', async () => {
      const secret = 'a shared approval key of at least 32 bytes';
      await setUp({ approval: { secret } });
      const other = await start({ approval: { secret } });
      const elsewhere = track(await manualClient(await listen(other)));
      const { requestState } = await client.first('deploy', args);
      expect(textOf(await elsewhere.retry('deploy', args, requestState, accept))).toBe('deployed to prod');
      expect(other.runs()).toBe(1);
    });

    it('refuses every answer but an accepted yes, always with a refusal and never a protocol error (fuzzed)', async () => {
      await setUp();
      const near = fc.oneof(
        fc.record({
          action: fc.constantFrom('accept', 'decline', 'cancel', 'ACCEPT', ''),
          content: fc.option(fc.dictionary(fc.constantFrom('approve', 'Approve', 'yes'), fc.jsonValue()), {
            nil: undefined,
          }),
        }),
        fc.jsonValue(),
      );
      await fc.assert(
        fc.asyncProperty(near, async (answer) => {
          const { requestState } = await client.first('deploy', args);
          const result = await client.retry('deploy', args, requestState, answer);
          const yes = isAcceptedYes(answer);
          expect(result.isError === true).toBe(!yes);
          if (!yes) expect(errorOf(result)?.code).toMatch(/^APPROVAL_(DECLINED|CANCELLED|INVALID)$/);
        }),
        { numRuns: 60 },
      );
    });

    it('refuses a state sealed by a process with another key', async () => {
      await setUp();
      const other = await start();
      const elsewhere = track(await manualClient(await listen(other)));
      const { requestState } = await client.first('deploy', args);
      refusedWith(await elsewhere.retry('deploy', args, requestState, accept), RiskErrorCode.APPROVAL_INVALID);
    });
  });
});

describe('which tools ask (agent mode)', () => {
  async function importedKit(
    options: Parameters<typeof approvalServer>[0],
  ): Promise<{ s: ApprovalServer; client: Connected }> {
    const s = await start(options);
    const up = upstream();
    await s.server.import({ name: 'dict', connection: { type: 'in-process', server: up } });
    const client = track(await legacyClient(s.server, no));
    return { s, client };
  }

  it('asks before calls of imported tools a rule marks hitl, by glob', async () => {
    const { client } = await importedKit({ servers: { dict: official }, tools: [{ match: 'look*', hitl: true }] });
    refusedWith(await client.call('lookup', { word: 'sluice' }), RiskErrorCode.APPROVAL_DECLINED);
    expect(client.forms[0]?.message).toContain('from upstream "dict"');
  });

  it('asks before every tool at or above approval.defaultFromLevel, and credits it one band', async () => {
    // An upstream nobody described: unknown trust makes its tools L4.
    const { s, client } = await importedKit({ approval: { defaultFromLevel: 'L4' } });
    refusedWith(await client.call('lookup', { word: 'sluice' }), RiskErrorCode.APPROVAL_DECLINED);
    const listed = (await client.client.listTools()).tools.find((t) => t.name === 'lookup');
    expect(listed?._meta?.['dev.sluice/risk']).toMatchObject({ level: 'L3', hitl: true });
    expect(s.logs.events(RiskEvent.TOOL_PUBLISH_RISK_COMPUTED)).toMatchObject([
      { tool: 'lookup', composed: 'L4', level: 'L3', hitlMitigated: true },
    ]);
  });

  it('runs the operator’s auto-execute tools without asking, whatever their level', async () => {
    const { client } = await importedKit({ approval: { defaultFromLevel: 'L1', autoExecute: ['look*'] } });
    expect(textOf(await client.call('lookup', { word: 'sluice' }))).toBe('sluice: a word');
    expect(client.forms).toEqual([]);
  });

  it('lets a tool’s own hitl: false win over defaultFromLevel', async () => {
    const { client } = await importedKit({
      approval: { defaultFromLevel: 'L1' },
      tools: [{ match: 'lookup', hitl: false }],
    });
    expect(textOf(await client.call('lookup', { word: 'sluice' }))).toBe('sluice: a word');
  });

  it('asks nobody in audit mode: the core logs the refusal it would have made and the tool runs', async () => {
    const s = await start({ mode: 'audit' });
    const client = track(await legacyClient(s.server, no));
    expect(textOf(await client.call('deploy', { env: 'prod' }))).toBe('deployed to prod');
    expect(client.forms).toEqual([]);
    expect(s.logs.events('audit.refusal')).toMatchObject([{ plugin: 'risk', code: RiskErrorCode.APPROVAL_REQUIRED }]);
  });

  it('refuses with APPROVAL_UNAVAILABLE a gated call made in-process, where nobody can be asked', async () => {
    const s = await start();
    refusedWith(await s.server.call('deploy', { env: 'prod' }), RiskErrorCode.APPROVAL_UNAVAILABLE);
  });
});

describe('ctx.approve()', () => {
  it('is the risk plugin’s approver: a handler can ask a person itself', async () => {
    const s = await start();
    expect(s.server.container.isRegistered(Tokens.Approver, true)).toBe(true);
    s.server.tool({
      name: 'careful',
      handler: async (_args, ctx) => {
        const decision = await ctx.approve({ message: 'Empty the cache?' });
        return { content: [{ type: 'text', text: decision.approved ? 'emptied' : `kept (${decision.reason})` }] };
      },
    });
    const client = track(await legacyClient(s.server, yes));
    expect(textOf(await client.call('careful'))).toBe('emptied');
    expect(client.forms[0]?.message).toBe('Empty the cache?');
  });

  it('refuses a gated call that another tool makes on a 2026-07-28 client: only the client’s own call can ask', async () => {
    const s = await start();
    s.server.tool({ name: 'ship', handler: async (_args, ctx) => ctx.call('deploy', { env: 'prod' }) });
    const client = track(await modernClient(await listen(s), yes));
    refusedWith(await client.call('ship'), RiskErrorCode.APPROVAL_UNAVAILABLE);
    expect(s.runs()).toBe(0);
  });

  it('asks for a gated call another tool makes on a 2025-11-25 client', async () => {
    const s = await start();
    s.server.tool({ name: 'ship', handler: async (_args, ctx) => ctx.call('deploy', { env: 'prod' }) });
    const client = track(await legacyClient(s.server, yes));
    expect(textOf(await client.call('ship'))).toBe('deployed to prod');
  });
});
