// The README's "Connecting a client" section, as a user follows it: its mcpServers config parses, and the SDK
// client configured from it (URL and Authorization header, ${SLUICE_API_KEY} expanded as clients expand it)
// reaches a gateway with an API key; a wrong key is refused. With SLUICE_NETWORK=1, the MCP Inspector CLI
// (fetched with npx) connects both ways the README shows: --header, and --config with the same entry.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureUpstream, serve, tempConfig } from './helpers.js';
import type { Served } from './helpers.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const INSPECTOR = '@modelcontextprotocol/inspector@2.12.0';
const KEY = 'client-config-test-key-0123456789';

interface ServerEntry {
  type: string;
  url: string;
  headers: Record<string, string>;
}

/** The code blocks of one README section, with their language. */
function blocksOf(section: string): { lang: string; code: string }[] {
  const text = readFileSync(README, 'utf8');
  const start = text.indexOf(`\n## ${section}\n`);
  expect(start).toBeGreaterThan(0);
  const end = text.indexOf('\n## ', start + 1);
  return [...text.slice(start, end).matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/** The documented entry, as a client holds it once it has expanded ${VAR} and pointed the URL at this gateway. */
function documentedEntry(url: URL, key: string): ServerEntry {
  const json = blocksOf('Connecting a client').find((b) => b.lang === 'json');
  const config = JSON.parse(json!.code) as { mcpServers: Record<string, ServerEntry> };
  const entry = config.mcpServers.sluice!;
  expect(entry).toEqual({
    type: 'http',
    url: 'http://127.0.0.1:3000/mcp',
    headers: { Authorization: 'Bearer ${SLUICE_API_KEY}' },
  });
  const headers = Object.fromEntries(
    Object.entries(entry.headers).map(([name, value]) => [name, value.replace('${SLUICE_API_KEY}', key)]),
  );
  return { ...entry, url: entry.url.replace('http://127.0.0.1:3000', url.origin), headers };
}

async function connect(entry: ServerEntry): Promise<Client> {
  const client = new Client({ name: 'client-config-test', version: '1.0.0' });
  // As the README says: the header goes in requestInit.
  await client.connect(
    new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } }),
  );
  return client;
}

function inspector(args: readonly string[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(
      'npx',
      ['-y', INSPECTOR, '--cli', ...args, '--method', 'tools/list'],
      { timeout: 120_000, maxBuffer: 10 * 1024 * 1024, env: { ...process.env, MCP_INSPECTOR_SECRET_STORE: 'memory' } },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

let gateway: Served;

beforeAll(async () => {
  gateway = await serve(
    {
      listen: {
        http: {
          host: '127.0.0.1',
          port: 0,
          auth: { type: 'apiKeys', keys: [{ name: 'agent', key: '${SLUICE_API_KEY}' }] },
        },
      },
      upstreams: [fixtureUpstream('fx')],
    },
    { SLUICE_API_KEY: KEY },
  );
}, 60_000);

afterAll(async () => {
  await gateway.stop();
});

describe("the README's client config for a gateway with an API key", () => {
  it('connects the SDK client it describes and lists the tools', async () => {
    const client = await connect(documentedEntry(gateway.url, KEY));
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('fx_echo');
    await client.close();
  });

  it('is refused with a wrong key', async () => {
    await expect(connect(documentedEntry(gateway.url, 'not-the-key-0123456789'))).rejects.toThrow(/Unknown API key/);
  });
});

describe.runIf(process.env.SLUICE_NETWORK === '1')('the MCP Inspector CLI (SLUICE_NETWORK=1: fetched with npx)', () => {
  it('lists the tools with --header, as the README shows', async () => {
    const listed = (await inspector([
      new URL('/mcp', gateway.url).href,
      '--header',
      `Authorization: Bearer ${KEY}`,
    ])) as { tools: { name: string }[] };
    expect(listed.tools.map((tool) => tool.name)).toContain('fx_echo');
  }, 150_000);

  it('lists the tools from the mcpServers config with --config and --server, its key written out', async () => {
    const entry = documentedEntry(gateway.url, KEY);
    const file = tempConfig({ mcpServers: { sluice: entry } }, 'mcp.json');
    try {
      const listed = (await inspector(['--config', file.file, '--server', 'sluice'])) as { tools: { name: string }[] };
      expect(listed.tools.map((tool) => tool.name)).toContain('fx_echo');
    } finally {
      file.remove();
    }
  }, 150_000);
});
