// The banking example of the chaining proposal, end to end through a real SDK client.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChainRecord } from '@sluice/plugin-chaining';
import { ChainingErrorCode, chaining } from '@sluice/plugin-chaining';
import { MetaKey, createTestKit, errorOf, metaOf, textOf } from '@sluice/testing';
import type { Plugin } from '@sluice/core';
import { Runs, busyGuard } from './support.js';

function bankTools(runs: Runs) {
  const checkAccountIssue = {
    name: 'check_account_issue',
    description: 'Analyses a customer account issue.',
    inputSchema: z.object({ customerId: z.string(), issue: z.string() }),
    handler: ({ customerId, issue }: { customerId: string; issue: string }) => {
      runs.hit('check_account_issue');
      if (issue !== 'locked')
        return { content: [{ type: 'text' as const, text: 'Resolved: password reset link sent.' }] };
      // The proposal's exact shape: the plain `nextTool` key.
      return {
        content: [{ type: 'text' as const, text: 'This account lockout requires specialist assistance.' }],
        _meta: {
          nextTool: {
            tool: 'initiate_human_handoff',
            arguments: { customerId, issueType: 'account_locked', urgency: 'high' },
          },
        },
      };
    },
  };
  const initiateHumanHandoff = {
    name: 'initiate_human_handoff',
    description: 'Hands the customer over to a human agent and opens a ticket.',
    inputSchema: z.object({ customerId: z.string(), issueType: z.string(), urgency: z.enum(['low', 'high']) }),
    handler: ({ customerId, urgency }: { customerId: string; urgency: string }) => {
      runs.hit('initiate_human_handoff');
      return {
        content: [
          {
            type: 'text' as const,
            text: `Ticket T-1 opened for ${customerId} (${urgency}); an agent will join shortly.`,
          },
        ],
      };
    },
  };
  return [checkAccountIssue, initiateHumanHandoff];
}

async function bank(plugins: Plugin[]) {
  const runs = new Runs();
  const kit = await createTestKit({ plugins, tools: bankTools(runs) });
  return { kit, runs };
}

describe('the banking example', () => {
  it('hands a locked account over to a human in one client call', async () => {
    const { kit, runs } = await bank([chaining()]);
    const result = await kit.call('check_account_issue', { customerId: '12345', issue: 'locked' });

    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('Ticket T-1 opened for 12345 (high); an agent will join shortly.');
    const chain = metaOf<ChainRecord>(result, MetaKey.CHAIN);
    expect(chain?.origin).toBe('check_account_issue');
    expect(chain?.steps.map((s) => [s.tool, s.outcome])).toEqual([['initiate_human_handoff', 'ok']]);
    expect(chain?.steps[0]?.durationMs).toBeGreaterThanOrEqual(0);
    expect(result._meta?.nextTool).toBeUndefined();
    expect(runs.of('check_account_issue')).toBe(1);
    expect(runs.of('initiate_human_handoff')).toBe(1);
    await kit.close();
  });

  it('returns a resolved issue as it is, with no chain record', async () => {
    const { kit, runs } = await bank([chaining()]);
    const result = await kit.call('check_account_issue', { customerId: '12345', issue: 'password' });
    expect(textOf(result)).toBe('Resolved: password reset link sent.');
    expect(metaOf(result, MetaKey.CHAIN)).toBeUndefined();
    expect(runs.of('initiate_human_handoff')).toBe(0);
    await kit.close();
  });

  it('without the plugin, the client gets the directive and nothing runs', async () => {
    const { kit, runs } = await bank([]);
    const result = await kit.call('check_account_issue', { customerId: '12345', issue: 'locked' });
    expect(result._meta?.nextTool).toMatchObject({ tool: 'initiate_human_handoff' });
    expect(runs.of('initiate_human_handoff')).toBe(0);
    await kit.close();
  });

  it('stops with the chain listed when a load-shedding guard refuses the handoff', async () => {
    const busy = busyGuard(['initiate_human_handoff']);
    const { kit, runs } = await bank([busy, chaining()]);
    const result = await kit.call('check_account_issue', { customerId: '12345', issue: 'locked' });

    expect(result.isError).toBe(true);
    const error = errorOf(result);
    expect(error?.code).toBe(ChainingErrorCode.STEP_REFUSED);
    expect(error?.step).toMatchObject({ tool: 'initiate_human_handoff', code: 'SERVER_BUSY', retryAfterMs: 500 });
    expect(error?.pending).toEqual({
      tool: 'initiate_human_handoff',
      arguments: { customerId: '12345', issueType: 'account_locked', urgency: 'high' },
    });
    expect(textOf(result)).toContain(
      'Chain so far: check_account_issue -> initiate_human_handoff (refused: SERVER_BUSY).',
    );
    expect(textOf(result)).toContain('Call "initiate_human_handoff" yourself after 500 ms');
    // What ran is not lost: the analysis comes after the refusal.
    expect(textOf(result)).toContain('This account lockout requires specialist assistance.');
    expect(metaOf<ChainRecord>(result, MetaKey.CHAIN)).toMatchObject({ stoppedBy: ChainingErrorCode.STEP_REFUSED });
    // The guard saw the chained call, made on behalf of the tool that asked for it.
    expect(busy.seen).toEqual([
      { tool: 'check_account_issue', stack: [] },
      { tool: 'initiate_human_handoff', stack: ['check_account_issue'] },
    ]);
    expect(runs.of('initiate_human_handoff')).toBe(0);
    await kit.close();
  });
});
