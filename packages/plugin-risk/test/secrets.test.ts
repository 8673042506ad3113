import { afterEach, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@sluice/core';
import { createServer } from '@sluice/core';
import { captureLogger, createTestKit, textOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { RiskErrorCode, risk } from '@sluice/plugin-risk';
import { ProtocolError, Server } from '@modelcontextprotocol/server';
import { legacyClient } from './approval-helpers.js';
import '@sluice/http';
import '@sluice/upstream';

const ENV_TOKEN = 'rpt_live_4f9c2a7e1b8d4c6a9e3f';
const BEARER = 'hdr_bearer_7d1e9b3c5a2f8e4d6c0b';
const API_KEY = 'hdr_apikey_2b6e8d0f4a1c9e7b3d5f';
const SECRETS = [ENV_TOKEN, BEARER, API_KEY];
const fixture = new URL('./fixtures/leaky-upstream.mjs', import.meta.url).pathname;

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

/** An HTTP upstream that echoes the credentials it was sent, in an error result. */
async function echoingUpstream(): Promise<URL> {
  const upstream = createServer({ name: 'billing', version: '1.0.0', logger: captureLogger().logger });
  upstream.tool({
    name: 'charge',
    description: 'Charges a customer an amount in cents through the billing service.',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler: (_args, ctx) => ({
      content: [
        {
          type: 'text',
          text: `billing refused credentials "${ctx.headers.authorization}" / "${ctx.headers['x-api-key']}"`,
        },
      ],
      isError: true,
    }),
  });
  const listener = await upstream.listen();
  open.push(upstream);
  return listener.url;
}

describe('upstream secrets', () => {
  it('never appear in a log line or an error text, over everything captured during a failing run', async () => {
    const url = await echoingUpstream();
    const kit: TestKit = await createTestKit({ plugins: [risk({ ledger: { persist: 'memory' }, secrets: SECRETS })] });
    open.push(kit);
    await kit.server.import({
      name: 'reports',
      connection: { type: 'stdio', command: process.execPath, args: [fixture], env: { REPORTS_TOKEN: ENV_TOKEN } },
    });
    await kit.server.import({
      name: 'billing',
      connection: { type: 'http', url: url.href, headers: { authorization: `Bearer ${BEARER}`, 'x-api-key': API_KEY } },
    });
    const results: CallToolResult[] = [
      await kit.call('fetch_report', { id: 'q3' }),
      await kit.call('export_report', { id: 'q3' }),
      await kit.call('charge', { amount: 100 }),
    ];
    for (const result of results) expect(result.isError).toBe(true);
    // The upstreams did leak: their answers name the credentials, now masked.
    expect(textOf(results[0] as CallToolResult)).toContain('token [redacted] was rejected');
    expect(textOf(results[2] as CallToolResult)).toContain('"Bearer [redacted]" / "[redacted]"');
    await waitForStderr(kit);
    const everything = kit.logs.text() + JSON.stringify(results);
    for (const secret of SECRETS) expect(everything).not.toContain(secret);
    expect(kit.logs.events('tool.crash').map((r) => r.tool)).toEqual(['fetch_report', 'export_report', 'charge']);
  });

  it("are masked in the core's upstream.call_failed line when an upstream quotes one the connection never held", async () => {
    const partner = 'partner_key_5c1f9a3e7d2b8046';
    // A JSON-RPC error from the upstream is what core logs as upstream.call_failed.
    const up = new Server({ name: 'partner', version: '1.0.0' }, { capabilities: { tools: {} } });
    up.setRequestHandler('tools/list', async () => ({
      tools: [
        { name: 'quote', description: 'Quotes a price from the partner service.', inputSchema: { type: 'object' } },
      ],
    }));
    up.setRequestHandler('tools/call', async () => {
      throw new ProtocolError(-32603, `partner refused key ${partner}`);
    });
    const kit: TestKit = await createTestKit({
      plugins: [risk({ ledger: { persist: 'memory' }, secrets: [partner] })],
    });
    open.push(kit);
    await kit.server.import({ name: 'partner', connection: { type: 'in-process', server: up } });
    const result = await kit.call('quote', {});
    expect(result.isError).toBe(true);
    const failed = kit.logs.events('upstream.call_failed');
    expect(failed).toHaveLength(1);
    expect(String(failed[0]?.error)).toContain('partner refused key [redacted]');
    expect(kit.logs.text() + JSON.stringify(result)).not.toContain(partner);
  });

  it('never appear in the approval form, even when the model puts one in the arguments', async () => {
    const logs = captureLogger();
    const server = createServer({
      name: 's',
      version: '1',
      logger: logs.logger,
      plugins: [risk({ ledger: { persist: 'memory' }, secrets: SECRETS })],
    });
    server.tool({ name: 'send', policy: { risk: { hitl: true } }, handler: () => ({ content: [] }) });
    open.push(server);
    const client = await legacyClient(server, () => ({ action: 'decline' }));
    open.push(client);
    const result = await client.call('send', { body: `use ${BEARER} please` });
    expect(result.isError).toBe(true);
    expect((result._meta?.['dev.sluice/error'] as { code: string }).code).toBe(RiskErrorCode.APPROVAL_DECLINED);
    expect(client.forms[0]?.message).toContain('use [redacted] please');
    expect(logs.text() + JSON.stringify(client.forms)).not.toContain(BEARER);
  });
});

/** The child's stderr arrives on its own schedule: wait until the core logged the line it wrote. */
async function waitForStderr(kit: TestKit): Promise<void> {
  for (
    let i = 0;
    i < 200 && !kit.logs.records.some((r) => r.event === 'upstream.stderr' && String(r.text).includes('auth failed'));
    i++
  ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(
    kit.logs.records.some(
      (r) => r.event === 'upstream.stderr' && String(r.text).includes('auth failed for q3 with token [redacted]'),
    ),
  ).toBe(true);
}
