import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@sluice/core';
import { CoreErrorCode, MetaKey, createServer } from '@sluice/core';
import { captureLogger, createTestKit, errorOf, metaOf, textOf } from '@sluice/testing';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { egress, interventionText } from '@sluice/plugin-egress';
import type { EgressRecord } from '@sluice/plugin-egress';
import { isValidUtf8Text, oracleSize } from './oracle.js';
import '@sluice/http';
import '@sluice/upstream';

const MiB = 1024 * 1024;
// 30 MB of log lines with multi-byte characters in them, built once.
const LOG = 'GET /api/orders?page=… 200 — 12 ms 🚀\n';
const THIRTY_MB = LOG.repeat(Math.ceil((30 * MiB) / Buffer.byteLength(LOG)));
const flood = (): CallToolResult => ({ content: [{ type: 'text', text: THIRTY_MB }] });
const ping = { name: 'ping', handler: () => ({ content: [{ type: 'text' as const, text: 'pong' }] }) };

function expectCapped(result: CallToolResult, limit: number): void {
  expect(oracleSize(result)).toBeLessThanOrEqual(limit);
  const [kept, notice] = result.content as { text: string }[];
  expect(notice?.text).toBe(interventionText(limit));
  expect(isValidUtf8Text(kept!.text)).toBe(true);
  expect(THIRTY_MB.startsWith(kept!.text)).toBe(true);
  expect(kept!.text.length).toBeGreaterThan(limit / 2);
  const record = metaOf<EgressRecord>(result, MetaKey.EGRESS)!;
  expect(record.limitBytes).toBe(limit);
  // A part over the limit is counted only until it is known to be over: its length, at least.
  expect(record.originalBytes).toBeGreaterThanOrEqual(THIRTY_MB.length);
  expect(record.originalBytes).toBeLessThanOrEqual(oracleSize(flood()));
}

describe('a 30 MB result', () => {
  it('from a local handler reaches a real client capped at 2 MB while the server keeps serving', async () => {
    const kit = await createTestKit({
      plugins: [egress({ maxPayloadBytes: 2 * MiB })],
      tools: [{ name: 'logs_dump', handler: flood }, ping],
    });
    const [big, meanwhile] = await Promise.all([kit.call('logs_dump'), kit.call('ping')]);
    expectCapped(big, 2 * MiB);
    expect(textOf(big)).toContain('Payload truncated at 2.0MB');
    expect(textOf(meanwhile)).toBe('pong');
    expect(textOf(await kit.call('ping'))).toBe('pong');
    expectCapped(await kit.call('logs_dump'), 2 * MiB);
    await kit.close();
  });

  describe('from a real upstream server over Streamable HTTP', () => {
    async function gatewayTo(limit: number) {
      const upstream = createServer({ name: 'warehouse', version: '1', logger: captureLogger().logger });
      upstream.tool({ name: 'logs_dump', handler: flood });
      const listener = await upstream.listen();
      const gateway = createServer({
        name: 'gateway',
        version: '1',
        logger: captureLogger().logger,
        plugins: [egress({ tools: { 'wh_*': { maxPayloadBytes: limit } } })],
      });
      gateway.tool(ping);
      await gateway.import({
        name: 'warehouse',
        namespace: 'wh',
        connection: { type: 'http', url: listener.url.href },
        timeoutMs: 60_000,
      });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await gateway.connect(serverSide);
      const client = new Client({ name: 'model', version: '1' });
      await client.connect(clientSide);
      const call = async (name: string) => await client.callTool({ name, arguments: {} });
      const close = async () => {
        await client.close();
        await gateway.close();
        await upstream.close();
      };
      return { gateway, call, close };
    }

    it('is read and capped at the limit when it fits under the read cap (4x the limit)', async () => {
      const { gateway, call, close } = await gatewayTo(8 * MiB);
      expect(gateway.tools().find((t) => t.name === 'wh_logs_dump')?.responseLimitBytes).toBe(32 * MiB);
      const [big, meanwhile] = await Promise.all([call('wh_logs_dump'), call('ping')]);
      expectCapped(big, 8 * MiB);
      expect(textOf(meanwhile)).toBe('pong');
      await close();
    });

    it('stops being read at 4x a 2 MB limit, and the gateway keeps serving', async () => {
      const { call, close } = await gatewayTo(2 * MiB);
      const [big, meanwhile] = await Promise.all([call('wh_logs_dump'), call('ping')]);
      expect(big.isError).toBe(true);
      expect(errorOf(big)?.code).toBe(CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE);
      expect(textOf(big)).toContain(String(8 * MiB));
      // The number is explained by the setting it comes from.
      expect(textOf(big)).toContain(`4 × its maxPayloadBytes of ${2 * MiB}`);
      expect(textOf(meanwhile)).toBe('pong');
      expect(textOf(await call('ping'))).toBe('pong');
      await close();
    });
  });
});
