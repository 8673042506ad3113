// A code-mode script whose call needs an operator's approval pauses like any other call that needs an
// answer: a 2026-07-28 client gets an input-required round whose state names the operator question, the
// operator answers through the admin API, and the retried script resumes without repeating its calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { AGENT_KEY, adminOf, paymentsConfig } from './operator-helpers.js';
import type { Round } from './operator-helpers.js';

const SCRIPT =
  "const before = await pay.transfers(); await pay.transfer({ payee: 'acme', cents: 7 }); return { before };";

let gateway: Gateway;
let url: URL;
let client: Client;

beforeAll(async () => {
  const config = paymentsConfig();
  gateway = createGateway(
    { ...config, plugins: { ...config.plugins, codeMode: {} } },
    { logger: captureLogger().logger },
  );
  url = (await gateway.start()).http!.url;
  client = new Client(
    { name: 'script-runner', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    },
  );
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${AGENT_KEY}` } } }),
  );
}, 60_000);

afterAll(async () => {
  await client.close();
  await gateway.close();
});

const run = async (extra: Record<string, unknown> = {}): Promise<Round & CallToolResult> =>
  await client.callTool({ name: 'execute_code', arguments: { code: SCRIPT }, ...extra }, { allowInputRequired: true });

describe('a script calling an operator-approved tool', () => {
  it('pauses with a state naming the operator question, and runs the call once after the approval', async () => {
    const api = adminOf(url);
    const before = await api.transfers();
    const first = await run();
    expect(first.resultType).toBe('input_required');
    // The operator decides: the client is asked nothing it could answer.
    expect(first.inputRequests ?? {}).toEqual({});
    const question = await api.next(new Set());
    expect(question.tool).toBe('pay_transfer');

    // Retried before the operator answered: still waiting, nothing ran.
    const waiting = await run({ requestState: first.requestState });
    expect(waiting.resultType).toBe('input_required');
    expect(await api.transfers()).toBe(before);

    expect((await api.request('/admin/v1/approvals/approve', { id: question.id })).status).toBe(200);
    const done = await run({ requestState: waiting.requestState });
    expect(errorOf(done)).toBeUndefined();
    expect(textOf(done)).toBe(`{"before":"${before}"}`);
    expect(await api.transfers()).toBe(before + 1);
  }, 60_000);
});
