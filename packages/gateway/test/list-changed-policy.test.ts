// A list change an upstream reports is an event a caller may time and count. Attacked from outside: a real
// `sluice serve` over loopback HTTP, two upstreams whose tools, resources, templates and prompts change on command,
// and an authz policy that grants one caller part of an upstream and another caller none of it. Neither may hear
// that a list changed when nothing it may see changed, over either protocol version.
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, serve } from './helpers.js';
import type { Served } from './helpers.js';

const CHANGING_UPSTREAM = fileURLToPath(new URL('./fixtures/changing-upstream.mjs', import.meta.url));
const KEY = 'list-changed-policy-key-0123456789';
const VERSIONS = ['2025-11-25', '2026-07-28'] as const;
type Version = (typeof VERSIONS)[number];
type Kind = 'tool' | 'resource' | 'template' | 'prompt';
const KINDS: readonly Kind[] = ['tool', 'resource', 'template', 'prompt'];

const LIST_CHANGED = {
  tool: 'notifications/tools/list_changed',
  resource: 'notifications/resources/list_changed',
  template: 'notifications/resources/list_changed',
  prompt: 'notifications/prompts/list_changed',
} as const;
type ListChanged = (typeof LIST_CHANGED)[Kind];
/** The description the fixture gives an item it adds. */
const ADDED: Record<Kind, (name: string) => string> = {
  tool: (name) => `tool ${name}`,
  resource: (name) => `note ${name}`,
  template: (name) => `notes under ${name}`,
  prompt: (name) => `prompt ${name}`,
};

const upstream = (name: string) => ({
  name,
  namespace: name,
  connection: { type: 'stdio', command: process.execPath, args: [CHANGING_UPSTREAM, name] },
});

let gateway: Served;
beforeAll(async () => {
  gateway = await serve({
    listen: {
      http: {
        port: 0,
        auth: {
          type: 'apiKeys',
          keys: [
            { name: 'admin', key: `${KEY}-admin`, scopes: ['admin'] },
            { name: 'reader', key: `${KEY}-reader`, scopes: ['read'] },
            { name: 'outsider', key: `${KEY}-outsider`, scopes: ['out'] },
          ],
        },
      },
    },
    upstreams: [upstream('vault'), upstream('open')],
    plugins: {
      authz: {
        rules: [
          { when: { scopes: ['admin'] }, upstreams: ['vault', 'open'] },
          // Part of vault (what is named public_*), and all of open, each by item.
          {
            when: { scopes: ['read'] },
            allow: ['vault_public_*', 'open_*'],
            resources: ['note:///vault/public_*', 'note:///open/*'],
            prompts: ['vault_public_*', 'open_*'],
          },
          // All of open, and nothing of vault.
          { when: { scopes: ['out'] }, upstreams: ['open'] },
        ],
      },
    },
  });
}, 60_000);
afterAll(() => gateway.stop());

async function clientOf(version: Version, key: string): Promise<Client> {
  const client = new Client(
    { name: 'list-changed-attacker', version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const headers = { authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(gateway.url, { requestInit: { headers } }));
  return client;
}

/** A caller that counts the list changes it hears: on its session's stream (2025-11-25) or a listen stream (2026-07-28). */
async function listenerOf(version: Version, key: string) {
  const client = await clientOf(version, key);
  const heard = new Map<ListChanged, number>();
  for (const method of new Set(Object.values(LIST_CHANGED)))
    client.setNotificationHandler(method, () => void heard.set(method, (heard.get(method) ?? 0) + 1));
  if (version === '2026-07-28')
    await client.listen({ toolsListChanged: true, resourcesListChanged: true, promptsListChanged: true });
  return {
    client,
    heard: (method: ListChanged) => heard.get(method) ?? 0,
    forget: () => heard.clear(),
  };
}

/** What the admin's own lists say of one item: its description, or undefined when it is not listed. */
async function listed(admin: Client, kind: Kind, upstreamName: string, name: string): Promise<string | undefined> {
  const exposed = `${upstreamName}_${name}`;
  const uri = `note:///${upstreamName}/${name}`;
  if (kind === 'tool') return (await admin.listTools()).tools.find((t) => t.name === exposed)?.description;
  if (kind === 'prompt') return (await admin.listPrompts()).prompts.find((p) => p.name === exposed)?.description;
  if (kind === 'resource') return (await admin.listResources()).resources.find((r) => r.uri === uri)?.description;
  const template = `${uri}/{id}`;
  return (await admin.listResourceTemplates()).resourceTemplates.find((t) => t.uriTemplate === template)?.description;
}

/** Changes one item upstream, and waits until the gateway shows the change to the admin: it has been told by then. */
async function change(
  admin: Client,
  upstreamName: string,
  kind: Kind,
  name: string,
  action: 'add' | 'edit' | 'remove',
) {
  await call(admin, `${upstreamName}_change`, { kind, name, action });
  const expected = action === 'add' ? ADDED[kind](name) : action === 'edit' ? 'edited' : undefined;
  await eventually(
    async () => (await listed(admin, kind, upstreamName, name)) === expected,
    `the gateway to show ${action} ${kind} ${upstreamName}/${name}`,
  );
}

type Listener = Awaited<ReturnType<typeof listenerOf>>;
interface Counts {
  readonly tools: number;
  readonly resources: number;
  readonly prompts: number;
}

/** Waits for a count to be reached, then a while longer: a notification sent before the last one is in by then. */
async function settled(count: () => number, expected: number, what: string): Promise<number> {
  await eventually(() => count() >= expected, what);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return count();
}

/** What a listener heard of each list, once it heard at least what it is expected to. */
async function heardOf(listener: Listener, expected: Counts): Promise<Counts> {
  return {
    tools: await settled(() => listener.heard(LIST_CHANGED.tool), expected.tools, 'the tool changes'),
    resources: await settled(() => listener.heard(LIST_CHANGED.resource), expected.resources, 'the resource changes'),
    prompts: await settled(() => listener.heard(LIST_CHANGED.prompt), expected.prompts, 'the prompt changes'),
  };
}

/**
 * Makes sure each listener's stream is open (a 2025-11-25 session's opens after its handshake): adds a tool of open,
 * which every caller may see, and waits until each heard it; then they forget it.
 */
async function streamsOpen(admin: Client, tag: string, listeners: readonly Listener[]): Promise<void> {
  await change(admin, 'open', 'tool', `warm_${tag}`, 'add');
  await eventually(
    () => listeners.every((listener) => listener.heard(LIST_CHANGED.tool) > 0),
    'every caller to hear the first change',
  );
  for (const listener of listeners) listener.forget();
}

describe('list_changed reaches a caller only when something it may see changed', () => {
  for (const version of VERSIONS) {
    it(`a caller granted part of an upstream, or none of it, hears no change to what is hidden from it (${version})`, async () => {
      const tag = version === '2025-11-25' ? 'v1' : 'v2';
      const admin = await clientOf('2025-11-25', `${KEY}-admin`);
      const reader = await listenerOf(version, `${KEY}-reader`);
      const outsider = await listenerOf(version, `${KEY}-outsider`);
      try {
        await streamsOpen(admin, tag, [reader, outsider]);
        for (const kind of KINDS) {
          // Hidden from both: added, edited and removed.
          const secret = `secret_${kind}_${tag}`;
          for (const action of ['add', 'edit', 'remove'] as const) await change(admin, 'vault', kind, secret, action);
          // Granted to the reader, part of an upstream the outsider is granted nothing of.
          await change(admin, 'vault', kind, `public_${kind}_${tag}`, 'add');
          // Granted to both: the last change, so that each stream is known to carry what it is sent.
          await change(admin, 'open', kind, `fence_${kind}_${tag}`, 'add');
        }
        // The reader: its public item and the fence, of each kind (resources and templates share one list).
        expect(await heardOf(reader, { tools: 2, resources: 4, prompts: 2 })).toEqual({
          tools: 2,
          resources: 4,
          prompts: 2,
        });
        // The outsider: only the fence of each kind.
        expect(await heardOf(outsider, { tools: 1, resources: 2, prompts: 1 })).toEqual({
          tools: 1,
          resources: 2,
          prompts: 1,
        });
      } finally {
        await Promise.all([admin.close(), reader.client.close(), outsider.client.close()]);
      }
    });

    it(`an upstream that says a list changed, changing nothing, is not heard by a caller granted none of it (${version})`, async () => {
      const tag = version === '2025-11-25' ? 'a1' : 'a2';
      const admin = await listenerOf('2025-11-25', `${KEY}-admin`);
      const reader = await listenerOf(version, `${KEY}-reader`);
      const outsider = await listenerOf(version, `${KEY}-outsider`);
      try {
        // The reader may see these items of vault; the outsider none.
        for (const kind of ['resource', 'prompt'] as const)
          await change(admin.client, 'vault', kind, `public_${kind}_${tag}`, 'add');
        await streamsOpen(admin.client, tag, [admin, reader, outsider]);
        for (const kind of ['resource', 'prompt'] as const) {
          // Vault's lists stay as they are: it only says that they changed.
          await call(admin.client, 'vault_change', { kind, name: 'base', action: 'announce' });
          await eventually(() => admin.heard(LIST_CHANGED[kind]) > 0, `the admin to hear vault's ${kind} news`);
          await change(admin.client, 'open', kind, `fence_${kind}_${tag}`, 'add');
        }
        // The reader: vault's word and the fence, of each list. The outsider: only the fence.
        expect(await heardOf(reader, { tools: 0, resources: 2, prompts: 2 })).toEqual({
          tools: 0,
          resources: 2,
          prompts: 2,
        });
        expect(await heardOf(outsider, { tools: 0, resources: 1, prompts: 1 })).toEqual({
          tools: 0,
          resources: 1,
          prompts: 1,
        });
      } finally {
        await Promise.all([admin.client.close(), reader.client.close(), outsider.client.close()]);
      }
    });
  }
});
