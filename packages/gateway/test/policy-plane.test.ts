// One policy plane, attacked from outside: a real `sluice serve` over loopback HTTP, clients of both protocol
// versions, and an upstream that serves any file through the template `file:///{+path}`. Every guard a tool call
// meets must meet resource reads, prompt gets and completions too.
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfig } from './helpers.js';
import type { CliRun } from './helpers.js';

const FILE_UPSTREAM = fileURLToPath(new URL('./fixtures/file-upstream.mjs', import.meta.url));
const VERSIONS = ['2025-11-25', '2026-07-28'] as const;
type Version = (typeof VERSIONS)[number];

const upstream = (extra: Record<string, unknown> = {}) => ({
  name: 'fs',
  connection: { type: 'stdio', command: process.execPath, args: [FILE_UPSTREAM] },
  ...extra,
});

async function clientOf(url: URL, version: Version, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client(
    { name: 'policy-attacker', version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

/** Starts `sluice serve` with this config; `stop()` ends it and removes the config. */
async function serve(config: Record<string, unknown>): Promise<{ url: URL; run: CliRun; stop(): Promise<void> }> {
  const { http, ...rest } = config;
  const file = tempConfig({ listen: { http: { host: '127.0.0.1', port: 0, ...(http ?? {}) } }, ...rest });
  const run = runCli(['serve', '--config', file.file]);
  const url = new URL((await run.event('http.listening')).url as string);
  return {
    url,
    run,
    stop: async () => {
      run.child.kill('SIGTERM');
      await run.exited;
      file.remove();
    },
  };
}

const textOf = (result: { contents: unknown[] }): string =>
  (result.contents as { text?: string }[]).map((c) => c.text ?? '').join('');

/** The 14 spellings of denied URIs an attacker tries, each meaning a file under /secret. */
export const DENIED_SPELLINGS = [
  'file:///secret/key',
  'file:///secret/other',
  'file:///public/../secret/key',
  'file:///./secret/key',
  'file:///secret/./key',
  'file:////secret/key',
  'file:///secret//key',
  'file:///%73ecret/key',
  'file:///%73%65%63%72%65%74/key',
  'FILE:///secret/key',
  'File:///secret/key',
  'file://localhost/secret/key',
  'file://LOCALHOST/secret/key',
  'file:///public/%2e%2E/secret/key',
] as const;

describe('denyResources is enforced on every request, in every spelling', () => {
  let gateway: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    gateway = await serve({ upstreams: [upstream({ denyResources: ['file:///secret/*'] })] });
  }, 60_000);
  afterAll(() => gateway.stop());

  for (const version of VERSIONS) {
    it(`refuses reads of all 14 spellings of a denied URI, directly and through the template (${version})`, async () => {
      const client = await clientOf(gateway.url, version);
      try {
        expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['file:///public/readme']);
        expect(textOf(await client.readResource({ uri: 'file:///public/readme' }))).toBe(
          'content of file:///public/readme',
        );
        // Through the template, an allowed file still reads.
        expect(textOf(await client.readResource({ uri: 'file:///etc/hosts' }))).toBe('content of file:///etc/hosts');
        for (const uri of DENIED_SPELLINGS) {
          await expect(client.readResource({ uri }), uri).rejects.toThrow(/not found/i);
        }
      } finally {
        await client.close();
      }
    });

    it(`refuses completion and subscription on a denied URI (${version})`, async () => {
      const client = await clientOf(gateway.url, version);
      try {
        await expect(
          client.complete({
            ref: { type: 'ref/resource', uri: 'file:///secret/key' },
            argument: { name: 'path', value: '' },
          }),
        ).rejects.toThrow(/not found/i);
        if (version === '2025-11-25')
          for (const uri of ['file:///secret/key', 'file:///%73ecret/key'])
            await expect(client.subscribeResource({ uri }), uri).rejects.toThrow(/not found/i);
      } finally {
        await client.close();
      }
    });
  }
});
