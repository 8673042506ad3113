// A tool the risk engine holds (redefined by its upstream, then approved or revoked by an operator) leaves or
// rejoins what callers see: the callers that may see it must hear that the list changed, and no other caller may.
// Attacked from outside: a real gateway over loopback HTTP, a rug-pulling upstream, an upstream whose tools change
// on command (the fence every caller may see), the admin API, and an authz policy that grants the rug-pulled
// upstream to one caller and nothing of it to another.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { captureLogger } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { call, eventually, httpClient, rugPullUpstream } from './helpers.js';

const CHANGING_UPSTREAM = fileURLToPath(new URL('./fixtures/changing-upstream.mjs', import.meta.url));
const KEY = 'held-list-changed-key-0123456789';
const TOOLS_CHANGED = 'notifications/tools/list_changed';

let gateway: Gateway;
let base: URL;

beforeAll(async () => {
  gateway = createGateway(
    {
      listen: {
        http: {
          port: 0,
          auth: {
            type: 'apiKeys',
            keys: [
              { name: 'ops', key: `${KEY}-ops`, scopes: ['admin'] },
              { name: 'agent', key: `${KEY}-agent`, scopes: ['shop'] },
              { name: 'outsider', key: `${KEY}-outsider`, scopes: ['open'] },
            ],
          },
        },
      },
      upstreams: [
        rugPullUpstream(),
        {
          name: 'open',
          namespace: 'open',
          connection: { type: 'stdio', command: process.execPath, args: [CHANGING_UPSTREAM, 'open'] },
        },
      ],
      plugins: {
        authz: {
          rules: [
            { when: { scopes: ['admin'] }, upstreams: ['shop', 'open'] },
            { when: { scopes: ['shop'] }, upstreams: ['shop', 'open'] },
            { when: { scopes: ['open'] }, upstreams: ['open'] },
          ],
        },
        risk: { ledger: { persist: 'memory' } },
      },
      admin: { scopes: ['admin'] },
    },
    { logger: captureLogger().logger },
  );
  const { http } = await gateway.start();
  base = http?.url as URL;
}, 60_000);
afterAll(() => gateway.close());

/** A caller that counts the tool list changes it hears on its session's stream. */
async function listenerOf(who: string) {
  const client = await httpClient(base, { authorization: `Bearer ${KEY}-${who}` });
  let heard = 0;
  client.setNotificationHandler(TOOLS_CHANGED, () => {
    heard++;
  });
  return { client, heard: () => heard };
}
type Listener = Awaited<ReturnType<typeof listenerOf>>;

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);

const admin = (path: string, body: unknown) =>
  fetch(new URL(path, base), {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}-ops`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

let fences = 0;
/**
 * Adds a tool every caller may see, and waits until each listener heard of it: a change sent to a stream before
 * the fence has arrived by then. Returns what each heard before the fence.
 */
async function fence(ops: Client, listeners: readonly Listener[]): Promise<number[]> {
  const before = listeners.map((listener) => listener.heard());
  const name = `fence_${++fences}`;
  await call(ops, 'open_change', { kind: 'tool', name, action: 'add' });
  await eventually(
    () => listeners.every((listener, k) => listener.heard() > (before[k] as number)),
    `every caller to hear ${name}`,
  );
  return listeners.map((listener) => listener.heard() - 1);
}

describe('a held tool leaving or rejoining the list is heard by the callers that may see it, and by no other', () => {
  it('tells the caller granted the tool when a redefinition holds it, an approval shows it and a revocation hides it', async () => {
    const ops = await httpClient(base, { authorization: `Bearer ${KEY}-ops` });
    const agent = await listenerOf('agent');
    const outsider = await listenerOf('outsider');
    const listeners = [agent, outsider];
    try {
      expect(await names(agent.client)).toContain('shop_lookup');
      expect(await names(outsider.client)).not.toContain('shop_lookup');
      // Each session's stream is open once it heard a first change.
      await fence(ops, listeners);

      // The upstream redefines lookup: the ledger holds it, and it leaves the agent's list.
      let counts = listeners.map((listener) => listener.heard());
      await call(agent.client, 'shop_rug_pull');
      await eventually(async () => !(await names(agent.client)).includes('shop_lookup'), 'the hold');
      let heard = await fence(ops, listeners);
      expect(heard[0]).toBeGreaterThan(counts[0] as number);
      expect(heard[1]).toBe(counts[1]);

      // An operator approves the new definition: lookup is back for the agent.
      counts = listeners.map((listener) => listener.heard());
      expect((await admin('/admin/v1/ledger/approve', { server: 'shop', tool: 'lookup' })).status).toBe(200);
      expect(await names(agent.client)).toContain('shop_lookup');
      heard = await fence(ops, listeners);
      expect(heard).toEqual([(counts[0] as number) + 1, counts[1]]);

      // An operator revokes it: gone again.
      counts = listeners.map((listener) => listener.heard());
      expect((await admin('/admin/v1/ledger/revoke', { server: 'shop', tool: 'lookup' })).status).toBe(200);
      expect(await names(agent.client)).not.toContain('shop_lookup');
      heard = await fence(ops, listeners);
      expect(heard).toEqual([(counts[0] as number) + 1, counts[1]]);
    } finally {
      await Promise.all([ops.close(), agent.client.close(), outsider.client.close()]);
    }
  });
});
