// What a `request` tap writes to a feature request's `outgoingMeta` reaches the upstream over loopback HTTP,
// next to what the relay sends in `_meta` itself: on the 2025-11-25 connection, and on a 2026-07-28
// caller's round, which carries the caller's capabilities in `_meta`. (A caller's own connection is
// covered in packages/upstream/test/feature-meta.test.ts.)
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, definePlugin } from '@sluice/core';
import type { HttpListener } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import '@sluice/http';
import '@sluice/upstream';

const HOST = '127.0.0.1';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Received {
  readonly meta: Record<string, unknown> | undefined;
  readonly envelope: Record<string, unknown> | undefined;
}

/** The upstream: a resource whose reads record the `_meta` (and the 2026-07-28 envelope) they came with. */
async function upstream() {
  const received: Received[] = [];
  const server = createServer({ name: 'saas', version: '1.0.0', logger: captureLogger().logger });
  server.extendSdk((sdk) =>
    sdk.registerResource('doc', 'saas://doc', {}, (uri, ctx) => {
      received.push({
        meta: ctx.mcpReq._meta,
        envelope: ctx.mcpReq.envelope,
      });
      return { contents: [{ uri: uri.href, text: 'doc' }] };
    }),
  );
  const listener = await server.listen({ host: HOST });
  cleanups.push(() => server.close());
  return { listener, received };
}

/** A plugin whose `request` tap writes a key of its own to every request's `outgoingMeta`. */
const writer = definePlugin({
  name: 'writer',
  version: '1.0.0',
  apply: ({ hooks }) =>
    hooks.request.tap('writer', (ctx) => {
      ctx.outgoingMeta['test/kind'] = ctx.kind;
      return undefined;
    }),
});

async function gateway(target: HttpListener): Promise<HttpListener> {
  const server = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger, plugins: [writer] });
  cleanups.push(() => server.close());
  const result = await server.import({ name: 'saas', connection: { type: 'http', url: target.url.href } });
  expect(result.skipped).toEqual([]);
  return server.listen({ host: HOST });
}

/** The capabilities of the 2026-07-28 callers: not the gateway's own, so that the upstream tells whose it got. */
const CALLER_CAPABILITIES = { roots: {} };

async function caller(url: URL, modern: boolean): Promise<Client> {
  const client = new Client(
    { name: 'caller', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: CALLER_CAPABILITIES } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(url));
  cleanups.push(() => client.close());
  return client;
}

const OURS = { 'test/kind': 'resources/read' };

describe("a request tap's outgoingMeta on each relay path", () => {
  it('2025-11-25: the _meta of the relayed read is the one the tap wrote', async () => {
    const target = await upstream();
    const client = await caller((await gateway(target.listener)).url, false);
    await client.readResource({ uri: 'saas://doc', _meta: { 'client/key': 'not relayed' } });
    expect(target.received).toEqual([{ meta: OURS, envelope: undefined }]);
  });

  it("2026-07-28 round: the tap's keys, beside the caller's capabilities the round sends", async () => {
    const target = await upstream();
    const client = await caller((await gateway(target.listener)).url, true);
    await client.readResource({ uri: 'saas://doc' });
    expect(target.received).toHaveLength(1);
    const [received] = target.received;
    expect(received?.meta).toEqual(OURS);
    expect(received?.envelope?.[CLIENT_CAPABILITIES_META_KEY]).toEqual(CALLER_CAPABILITIES);
  });
});
