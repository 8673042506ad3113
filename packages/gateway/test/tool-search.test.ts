// Tool search in `sluice serve`, as a child process, with real SDK clients over
// both protocol versions: search, describe, call what was found; a tool the
// caller may not call (authz, a header filter, a ledger hold) is never found;
// a keyword-stuffed tool does not outrank the right one; an upstream's
// list_changed reaches the index.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { errorOf, textOf } from '@sluice/testing';
import type { CliRun } from './helpers.js';
import { call, eventually, httpClient, rugPullUpstream, runCli, tempConfig } from './helpers.js';

const CATALOG_UPSTREAM = fileURLToPath(new URL('./fixtures/catalog-upstream.mjs', import.meta.url));
const READER = 'reader-key-0123456789abcdef';
const ADMIN = 'admin-key-0123456789abcdefg';

interface Match {
  readonly name: string;
  readonly summary: string;
  readonly upstream?: string;
  readonly risk?: string;
}

let run: CliRun;
let url: URL;
let remove: () => void;
const clients: Client[] = [];

beforeAll(async () => {
  const config = tempConfig({
    listen: {
      http: {
        port: 0,
        auth: {
          type: 'apiKeys',
          keys: [
            { name: 'reader', key: READER, scopes: ['read'] },
            { name: 'admin', key: ADMIN, scopes: ['read', 'admin'] },
          ],
        },
      },
    },
    upstreams: [
      {
        name: 'wx',
        namespace: 'wx',
        connection: { type: 'stdio', command: process.execPath, args: [CATALOG_UPSTREAM] },
      },
      rugPullUpstream(),
    ],
    plugins: {
      authz: {
        rules: [
          { when: { scopes: ['read'] }, allow: ['!wx_delete_repository'] },
          { when: { scopes: ['admin'] }, allow: ['wx_delete_repository'] },
        ],
      },
      risk: { ledger: { persist: 'memory' } },
      toolSearch: { alwaysVisible: ['wx_add_translator'] },
    },
  });
  remove = () => config.remove();
  run = runCli(['serve', '--config', config.file]);
  url = new URL((await run.event('http.listening')).url as string);
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  run.child.kill('SIGTERM');
  await run.exited;
  remove();
});

const PROTOCOLS = ['2025-11-25', '2026-07-28'] as const;
type Protocol = (typeof PROTOCOLS)[number];

async function connect(protocol: Protocol, key: string, headers: Record<string, string> = {}): Promise<Client> {
  const all = { authorization: `Bearer ${key}`, ...headers };
  const client =
    protocol === '2025-11-25'
      ? await httpClient(url, all)
      : new Client({ name: 'tool-search-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: protocol } } });
  if (protocol === '2026-07-28')
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: all } }));
  clients.push(client);
  return client;
}

async function search(client: Client, query: string, limit = 8): Promise<Match[]> {
  const result: CallToolResult = await call(client, 'search_tools', { query, limit });
  expect(result.isError, textOf(result)).toBeFalsy();
  return (result.structuredContent as { tools: Match[] }).tools;
}
const names = (matches: Match[]): string[] => matches.map((m) => m.name);

describe.each(PROTOCOLS)('sluice serve with tool search, %s', (protocol) => {
  it('lists only the search tools and the always-visible tool', async () => {
    const client = await connect(protocol, READER);
    const listed = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(listed).toEqual(['describe_tools', 'search_tools', 'wx_add_translator']);
  });

  it('searches, describes and calls the tool it found', async () => {
    const client = await connect(protocol, READER);
    const [first] = await search(client, 'what is the weather going to be in Lyon');
    expect(first).toMatchObject({
      name: 'wx_get_forecast',
      upstream: 'wx',
      summary: 'Get the weather forecast for a location.',
    });
    expect(first?.risk).toMatch(/^L[0-5]$/);
    const described = await call(client, 'describe_tools', { names: ['wx_get_forecast'] });
    const [definition] = (described.structuredContent as { tools: { name: string; inputSchema: unknown }[] }).tools;
    expect(definition?.inputSchema).toMatchObject({ properties: { city: { type: 'string' } }, required: ['city'] });
    expect(textOf(await call(client, first!.name, { city: 'Lyon' }))).toBe('sunny in Lyon');
  });

  it('never finds a tool authz forbids the caller, and finds it for a caller it grants', async () => {
    const reader = await connect(protocol, READER);
    expect(names(await search(reader, 'delete repository permanently wx_delete_repository', 25))).not.toContain(
      'wx_delete_repository',
    );
    const describe = await call(reader, 'describe_tools', { names: ['wx_delete_repository'] });
    expect(describe.structuredContent).toEqual({ tools: [], unknown: ['wx_delete_repository'] });
    const admin = await connect(protocol, ADMIN);
    expect(names(await search(admin, 'delete a repository'))[0]).toBe('wx_delete_repository');
  });

  it('never finds a tool the x-sluice-exclude-tools header filters out', async () => {
    const client = await connect(protocol, READER, { 'x-sluice-exclude-tools': 'wx_read_file' });
    expect(names(await search(client, 'read the contents of a file', 25))).not.toContain('wx_read_file');
    const plain = await connect(protocol, READER);
    expect(names(await search(plain, 'read the contents of a file'))[0]).toBe('wx_read_file');
  });

  it('ranks the right tool above a keyword-stuffed one', async () => {
    const client = await connect(protocol, READER);
    for (const query of ['weather forecast', 'forecast for my city', 'weather in a city'])
      expect(names(await search(client, query))[0], query).toBe('wx_get_forecast');
  });
});

describe('sluice serve with tool search, as tools change', () => {
  it('stops finding a tool the ledger holds after a rug pull', async () => {
    const client = await connect('2025-11-25', READER);
    expect(names(await search(client, 'look up a product price'))).toContain('shop_lookup');
    expect(textOf(await call(client, 'shop_rug_pull'))).toBe('redefined');
    await eventually(
      async () => errorOf(await call(client, 'shop_lookup', { id: 'p1' }))?.code === 'TOOL_AWAITING_REREVIEW',
      'the ledger to hold shop_lookup',
    );
    for (const protocol of PROTOCOLS) {
      const other = await connect(protocol, ADMIN);
      expect(names(await search(other, 'look up a product by its id and price', 25))).not.toContain('shop_lookup');
    }
  });

  it('indexes a tool an upstream adds (its list_changed) and both protocols find and call it', async () => {
    const session = await connect('2025-11-25', READER);
    let changed = 0;
    session.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    expect(names(await search(session, 'translate text into spanish'))).not.toContain('wx_translate_text');
    expect(textOf(await call(session, 'wx_add_translator'))).toBe('added');
    await eventually(() => changed > 0, 'list_changed from the gateway');
    await eventually(
      async () => names(await search(session, 'translate text into spanish'))[0] === 'wx_translate_text',
      'the new tool in the index',
    );
    const stateless = await connect('2026-07-28', READER);
    expect(names(await search(stateless, 'translate text into spanish'))[0]).toBe('wx_translate_text');
    expect(textOf(await call(stateless, 'wx_translate_text', { text: 'hello' }))).toBe('hola: hello');
  });
});
