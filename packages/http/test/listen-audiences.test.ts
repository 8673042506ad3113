import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Stage, createServer, definePlugin } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import '@sluice/http';

// Real SDK clients of both protocol versions over the HTTP listener, each a caller who may see only its own tools.

const KEYS = { alice: 'a'.repeat(64), bob: 'b'.repeat(64) } as const;
type Caller = keyof typeof KEYS;
const VERSIONS = ['2025-11-25', '2026-07-28'] as const;

/** Each verified caller sees the tools named after it (`alice_*`), and no other. */
const ownTools = definePlugin({
  name: 'own-tools',
  version: '1.0.0',
  apply: ({ hooks }) =>
    hooks.listTools.tap({ name: 'own-tools', stage: Stage.FILTER }, (tools, ctx) =>
      tools.filter((tool) => ctx.auth !== undefined && tool.name.startsWith(`${ctx.auth.subject}_`)),
    ),
});

const tool = (name: string) => ({ name, handler: () => ({ content: [] }) });

/** A caller that counts the tool list changes it hears, on its session (2025-11-25) or a listen stream (2026-07-28). */
async function listenerOf(url: URL, version: (typeof VERSIONS)[number], caller: Caller) {
  const client = new Client(
    { name: caller, version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  let heard = 0;
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    heard++;
  });
  const headers = { authorization: `Bearer ${KEYS[caller]}` };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  if (version === '2026-07-28') await client.listen({ toolsListChanged: true });
  return { client, heard: () => heard };
}

/** Registers a tool and waits until it is exposed: clients have been told by then. */
async function register(server: SluiceServer, name: string): Promise<void> {
  server.tool(tool(name));
  await server.ready();
}

/** Adds tools of the caller's until it hears of one: a session's stream opens only after its handshake. */
async function warm(server: SluiceServer, caller: Caller, heard: () => number): Promise<void> {
  for (let i = 0; heard() === 0; i++) {
    await register(server, `${caller}_warm${i}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('tool list changes over HTTP reach only the callers who may see a changed tool', () => {
  for (const version of VERSIONS) {
    it(`each caller hears of its own new tool, and not of the other's (${version})`, async () => {
      const server = createServer({ name: 'own', version: '1', logger: captureLogger().logger, plugins: [ownTools] });
      server.tool(tool('alice_base'));
      const listener = await server.listen({
        auth: { type: 'apiKeys', keys: (['alice', 'bob'] as const).map((name) => ({ name, key: KEYS[name] })) },
      });
      const alice = await listenerOf(listener.url, version, 'alice');
      const bob = await listenerOf(listener.url, version, 'bob');
      try {
        await warm(server, 'alice', alice.heard);
        await warm(server, 'bob', bob.heard);
        const before = { alice: alice.heard(), bob: bob.heard() };
        await register(server, 'bob_secret');
        await register(server, 'alice_last');
        await expect.poll(() => alice.heard() - before.alice).toBe(1);
        await expect.poll(() => bob.heard() - before.bob).toBe(1);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect({ alice: alice.heard() - before.alice, bob: bob.heard() - before.bob }).toEqual({ alice: 1, bob: 1 });
      } finally {
        await Promise.all([alice.client.close(), bob.client.close()]);
        await server.close();
      }
    });
  }
});
