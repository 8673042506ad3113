// `sluice approvals` as a child process against a running gateway: lists the operator question a waiting
// call asked, approves it (the call runs) or denies it with a reason (the caller reads it); refuses bad usage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import { parseCommandLine } from '../src/cli-args.js';
import { GatewayErrorCode } from '../src/errors.js';
import type { Gateway } from '@sluice/gateway';
import type { ApprovalEvent, RiskPlugin } from '@sluice/plugin-risk';
import { runCli, tempConfig } from './helpers.js';
import { AGENT_KEY, OPS_KEY, adminOf, paymentsConfig, yesClient } from './operator-helpers.js';

let gateway: Gateway;
let url: URL;
let api: ReturnType<typeof adminOf>;
const config = tempConfig(paymentsConfig());
const seen = new Set<string>();
const events: ApprovalEvent[] = [];

beforeAll(async () => {
  gateway = createGateway(paymentsConfig(), { logger: captureLogger().logger });
  url = (await gateway.start()).http?.url as URL;
  api = adminOf(url);
  (gateway.server.plugins.find((p) => p.name === 'risk') as RiskPlugin).onApprovalEvent((e) => events.push(e));
}, 60_000);

afterAll(async () => {
  await gateway.close();
  config.remove();
});

async function sluice(args: readonly string[], key = OPS_KEY) {
  const run = runCli(['approvals', ...args, '--config', config.file, '--url', url.origin], { SLUICE_ADMIN_KEY: key });
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

describe('sluice approvals, against a running gateway', () => {
  it('lists the waiting question with its text, and approves it: the call runs', async () => {
    const client = await yesClient(url, 'legacy');
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'acme', cents: 42 } });
      const question = await api.next(seen);
      const list = await sluice(['list']);
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(new RegExp(`${question.id}\\s+pay_transfer\\s+L4\\s+agent\\s+operator`));
      expect(list.stdout).toContain('Arguments: {"payee":"acme","cents":42}');
      const json = JSON.parse((await sluice(['list', '--json'])).stdout) as { approvals: Array<{ id: string }> };
      expect(json.approvals.map((a) => a.id)).toContain(question.id);

      const approved = await sluice(['approve', question.id]);
      expect(approved.stdout).toBe(`approved ${question.id}, as key:ops\n`);
      expect(textOf(await result)).toMatch(/^transfer \d+: 42 cents to acme$/);
      expect(events.find((e) => e.id === question.id && e.kind === 'answered')).toMatchObject({
        via: 'cli',
        by: 'key:ops',
      });
    } finally {
      await client.close();
    }
  });

  it('denies with a reason the caller reads; refuses the agent key and a second answer', async () => {
    const client = await yesClient(url, 'legacy');
    try {
      const result = client.callTool({ name: 'pay_transfer', arguments: { payee: 'eve', cents: 43 } });
      const question = await api.next(seen);
      const refused = await sluice(['approve', question.id], AGENT_KEY);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('the admin surface needs the scope admin');
      const denied = await sluice(['deny', question.id, '--reason', 'eve is not a supplier']);
      expect(denied.stdout).toBe(`denied ${question.id}, as key:ops\n`);
      const answer = await result;
      expect(errorOf(answer)?.code).toBe('APPROVAL_DECLINED');
      expect(JSON.stringify(answer.content)).toContain('eve is not a supplier');
      const again = await sluice(['approve', question.id]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('the question was already answered');
    } finally {
      await client.close();
    }
  });

  it('refuses bad usage', () => {
    for (const argv of [
      ['approvals'],
      ['approvals', 'approve'],
      ['approvals', 'deny', '1-AAAAAAAAAAAAAAAA'],
      ['approvals', 'list', 'x'],
      ['approvals', 'list', '--reason', 'x'],
      ['ledger', 'list', '--reason', 'x'],
      ['serve', '--reason', 'x'],
    ])
      expect(() => parseCommandLine(argv)).toThrow(expect.objectContaining({ code: GatewayErrorCode.USAGE }));
    expect(parseCommandLine(['approvals', 'deny', '1-AAAAAAAAAAAAAAAA', '--reason', 'no'])).toMatchObject({
      kind: 'approvals',
      action: 'deny',
      id: '1-AAAAAAAAAAAAAAAA',
      reason: 'no',
    });
  });
});
