// Limits per verified caller: one caller's flood sheds only its own calls.
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer, readRefusal } from '@sluice/core';
import type { CallToolResult, SluiceServer } from '@sluice/core';
import { ConcurrencyErrorCode, concurrency } from '@sluice/plugin-concurrency';
import '@sluice/http';

const KEYS = { alice: 'a'.repeat(24), bob: 'b'.repeat(24) };
let server: SluiceServer | undefined;
afterEach(async () => {
  await server?.close();
});

async function clientFor(url: URL, key: string): Promise<Client> {
  const client = new Client({ name: 'caller', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

describe('per-caller limits', () => {
  it("gives each caller its own slots: alice's second call is shed while bob's runs", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    server = createServer({ name: 'shared', version: '1.0.0', plugins: [concurrency()] });
    server.tool({
      name: 'slow',
      policy: { concurrency: { maxActive: 1, maxQueue: 0, per: 'caller' } },
      handler: async () => {
        running++;
        await gate;
        return { content: [{ type: 'text', text: 'done' }] };
      },
    });
    const listener = await server.listen({
      auth: {
        type: 'apiKeys',
        keys: [
          { name: 'alice', key: KEYS.alice },
          { name: 'bob', key: KEYS.bob },
        ],
      },
    });
    const alice = await clientFor(listener.url, KEYS.alice);
    const bob = await clientFor(listener.url, KEYS.bob);
    const first = alice.callTool({ name: 'slow', arguments: {} });
    while (running < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    const shed = await alice.callTool({ name: 'slow', arguments: {} });
    expect(readRefusal(shed)).toMatchObject({ code: ConcurrencyErrorCode.SERVER_BUSY });
    const bobs = bob.callTool({ name: 'slow', arguments: {} });
    while (running < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    expect((await first).isError).toBeFalsy();
    expect((await bobs).isError).toBeFalsy();
    await alice.close();
    await bob.close();
  });

  it("refuses a caller's calls past its rate with RATE_LIMITED, and not another caller's", async () => {
    server = createServer({ name: 'metered', version: '1.0.0', plugins: [concurrency()] });
    server.tool({
      name: 'quick',
      policy: { concurrency: { maxActive: 10, per: 'caller', rate: { calls: 2, perMs: 60_000 } } },
      handler: () => ({ content: [{ type: 'text', text: 'ok' }] }),
    });
    const listener = await server.listen({
      auth: {
        type: 'apiKeys',
        keys: [
          { name: 'alice', key: KEYS.alice },
          { name: 'bob', key: KEYS.bob },
        ],
      },
    });
    const alice = await clientFor(listener.url, KEYS.alice);
    const bob = await clientFor(listener.url, KEYS.bob);
    const quick = (client: Client) => client.callTool({ name: 'quick', arguments: {} }) as Promise<CallToolResult>;
    expect((await quick(alice)).isError).toBeFalsy();
    expect((await quick(alice)).isError).toBeFalsy();
    const limited = await quick(alice);
    expect(readRefusal(limited)).toMatchObject({ code: ConcurrencyErrorCode.RATE_LIMITED });
    expect(readRefusal(limited)?.retryAfterMs).toBeGreaterThan(0);
    expect(readRefusal(limited)?.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect((await quick(bob)).isError).toBeFalsy();
    await alice.close();
    await bob.close();
  });
});
