// The approval flow through the config-file gateway: an upstream tool approval-gated at Sluice.
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger, SluiceServer } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { RiskErrorCode, RiskEvent } from '@sluice/plugin-risk';
import { accept, legacyHttpClient, manualClient, modernClient, no, yes } from './approval-helpers.js';

/** The part of @sluice/gateway this test drives (imported from its sources: the gateway depends on this package). */
interface GatewayModule {
  createGateway: (
    config: unknown,
    options: { logger: Logger },
  ) => {
    readonly server: SluiceServer;
    start(): Promise<{ http?: { url: URL } }>;
    close(): Promise<void>;
  };
}
const GATEWAY = new URL('../../gateway/src/index.ts', import.meta.url).href;
const PAYMENTS = new URL('./fixtures/payments-upstream.mjs', import.meta.url).pathname;

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function gateway() {
  const { createGateway } = (await import(GATEWAY)) as GatewayModule;
  const logs = captureLogger();
  const config = {
    listen: { http: { port: 0 } },
    telemetry: { metricsPath: false },
    upstreams: [{ name: 'payments', connection: { type: 'stdio', command: process.execPath, args: [PAYMENTS] } }],
    plugins: {
      risk: { ledger: { persist: 'memory' }, tools: [{ match: 'transfer', server: 'payments', hitl: true }] },
    },
  };
  const g = createGateway(config, { logger: logs.logger });
  open.push(g);
  const listeners = await g.start();
  return { url: listeners.http?.url as URL, logs };
}

describe('approval through the gateway', () => {
  it('runs an approved upstream call for a 2026-07-28 client, and refuses a declined one', async () => {
    const { url, logs } = await gateway();
    const approving = await modernClient(url, yes);
    open.push(approving);
    expect(textOf(await approving.call('transfer', { payee: 'acme', cents: 500 }))).toBe(
      'transfer 1: 500 cents to acme',
    );
    const declining = await modernClient(url, no);
    open.push(declining);
    const refused = await declining.call('transfer', { payee: 'acme', cents: 500 });
    expect(refused.isError).toBe(true);
    expect(errorOf(refused)?.code).toBe(RiskErrorCode.APPROVAL_DECLINED);
    expect(logs.events(RiskEvent.APPROVAL_DECIDED).map((r) => r.decision)).toEqual(['approved', 'declined']);
    expect(logs.events(RiskEvent.APPROVAL_REQUESTED)).toMatchObject([
      { server: 'payments', tool: 'transfer', via: 'input-required' },
      { via: 'input-required' },
    ]);
  });

  it('asks a 2025-11-25 client by elicitation, over its HTTP session', async () => {
    const { url } = await gateway();
    const client = await legacyHttpClient(url, yes);
    open.push(client);
    expect(textOf(await client.call('transfer', { payee: 'acme', cents: 1 }))).toBe('transfer 1: 1 cents to acme');
    expect(client.forms[0]?.message).toContain('"transfer" from upstream "payments"');
  });

  it('refuses a replayed approval', async () => {
    const { url } = await gateway();
    const client = await manualClient(url);
    open.push(client);
    const args = { payee: 'acme', cents: 9_999 };
    const { requestState } = await client.first('transfer', args);
    expect(textOf(await client.retry('transfer', args, requestState, accept))).toBe('transfer 1: 9999 cents to acme');
    expect(errorOf(await client.retry('transfer', args, requestState, accept))?.code).toBe(
      RiskErrorCode.APPROVAL_INVALID,
    );
  });
});
