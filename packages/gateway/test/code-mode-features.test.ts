// Issue 29: code mode inherits the policy plane. A script's resources.read() and prompts.get() are requests of the
// script's caller, through the same guards as the caller's own reads and gets: a real `sluice serve` over loopback
// HTTP, clients of both protocol versions, and an upstream that serves any file through `file:///{+path}`.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { textOf } from '@sluice/testing';
import { call, serve } from './helpers.js';
import type { Served } from './helpers.js';

const FILE_UPSTREAM = fileURLToPath(new URL('./fixtures/file-upstream.mjs', import.meta.url));
const VERSIONS = ['2025-11-25', '2026-07-28'] as const;
const KEY = 'code-mode-features-key-0123456789';

/** The gateway's config: a reader granted the public files and the prompt, and a scripter granted scripts alone. */
const config = (hidden?: 'forbidden') => ({
  listen: {
    http: {
      port: 0,
      auth: {
        type: 'apiKeys',
        keys: [
          { name: 'reader', key: `${KEY}-reader`, scopes: ['read'] },
          { name: 'scripter', key: `${KEY}-scripter`, scopes: ['script'] },
        ],
      },
    },
  },
  upstreams: [
    {
      name: 'fs',
      namespace: 'fs',
      connection: { type: 'stdio', command: process.execPath, args: [FILE_UPSTREAM] },
      denyResources: ['file:///secret/*'],
    },
  ],
  plugins: {
    authz: {
      ...(hidden === undefined ? {} : { hidden }),
      rules: [
        {
          when: { scopes: ['read'] },
          allow: ['fs_echo', 'execute_code'],
          resources: ['file:///public/*', 'file:///secret/*'],
          prompts: ['fs_greet'],
        },
        // May run scripts, and nothing else: no resource, no prompt.
        { when: { scopes: ['script'] }, allow: ['execute_code'] },
      ],
    },
    codeMode: {},
  },
});

let gateway: Served;
beforeAll(async () => {
  gateway = await serve(config());
}, 60_000);
afterAll(() => gateway.stop());

async function clientOf(version: (typeof VERSIONS)[number], key: string, served = gateway): Promise<Client> {
  const client = new Client(
    { name: 'code-mode-features', version: '1.0.0' },
    version === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const headers = { authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(served.url, { requestInit: { headers } }));
  return client;
}

const returned = (result: CallToolResult): unknown => {
  expect(result.isError, textOf(result)).toBeFalsy();
  return (result.structuredContent as { result: unknown }).result;
};

/** The code of the ToolError a script's read or get throws, or what it returned. */
const codeOf = (expression: string) => `try { return await ${expression}; } catch (e) { return 'refused ' + e.code; }`;

for (const version of VERSIONS) {
  describe(`a script reads and gets as its caller (${version})`, () => {
    it('reads a granted resource through the template and gets a granted prompt', async () => {
      const client = await clientOf(version, `${KEY}-reader`);
      try {
        const read = "return (await resources.read('file:///public/readme')).contents[0].text;";
        expect(returned(await call(client, 'execute_code', { code: read }))).toBe('content of file:///public/readme');
        const template = "return (await resources.read('file:///public/notes/a.txt')).contents[0].text;";
        expect(returned(await call(client, 'execute_code', { code: template }))).toBe(
          'content of file:///public/notes/a.txt',
        );
        const get = "return JSON.stringify((await prompts.get('fs_greet', { who: 'ann' })).messages);";
        expect(returned(await call(client, 'execute_code', { code: get }))).toContain('hello ann');
      } finally {
        await client.close();
      }
    });

    it('a caller denied a resource or prompt is answered from inside a script too as directly: it is not there', async () => {
      const client = await clientOf(version, `${KEY}-scripter`);
      try {
        // Directly: hidden, as what does not exist.
        await expect(client.readResource({ uri: 'file:///public/readme' })).rejects.toThrow(
          'Resource not found: file:///public/readme',
        );
        await expect(client.getPrompt({ name: 'fs_greet', arguments: { who: 'x' } })).rejects.toThrow(
          'Prompt "fs_greet" not found',
        );
        // From a script: the same answers, as for a prompt that does not exist.
        const read = codeOf("resources.read('file:///public/readme')");
        expect(returned(await call(client, 'execute_code', { code: read }))).toBe('refused RESOURCE_NOT_FOUND');
        const get = codeOf("prompts.get('fs_greet', { who: 'x' })");
        expect(returned(await call(client, 'execute_code', { code: get }))).toBe('refused INVALID_PARAMS');
        const missing = codeOf("prompts.get('fs_nothing', { who: 'x' })");
        expect(returned(await call(client, 'execute_code', { code: missing }))).toBe('refused INVALID_PARAMS');
      } finally {
        await client.close();
      }
    });

    it("denyResources holds inside a script in every spelling, whatever the caller's rules grant", async () => {
      const client = await clientOf(version, `${KEY}-reader`);
      try {
        for (const uri of ['file:///secret/key', 'file:///public/../secret/key', 'FILE:///%73ecret/key']) {
          await expect(client.readResource({ uri })).rejects.toThrow();
          const read = codeOf(`resources.read(${JSON.stringify(uri)})`);
          expect(returned(await call(client, 'execute_code', { code: read })), uri).toBe('refused RESOURCE_NOT_FOUND');
        }
      } finally {
        await client.close();
      }
    });
  });
}

describe("with hidden: 'forbidden', a script is refused with FORBIDDEN as its caller is", () => {
  let forbidding: Served;
  beforeAll(async () => {
    forbidding = await serve(config('forbidden'));
  }, 60_000);
  afterAll(() => forbidding.stop());

  for (const version of VERSIONS)
    it(`a caller denied a resource or prompt is refused from inside a script too, as directly (${version})`, async () => {
      const client = await clientOf(version, `${KEY}-scripter`, forbidding);
      try {
        // Directly: refused.
        await expect(client.readResource({ uri: 'file:///public/readme' })).rejects.toThrow(/FORBIDDEN/);
        await expect(client.getPrompt({ name: 'fs_greet', arguments: { who: 'x' } })).rejects.toThrow(/FORBIDDEN/);
        // From a script: the same refusals.
        const read = codeOf("resources.read('file:///public/readme')");
        expect(returned(await call(client, 'execute_code', { code: read }))).toBe('refused FORBIDDEN');
        const get = codeOf("prompts.get('fs_greet', { who: 'x' })");
        expect(returned(await call(client, 'execute_code', { code: get }))).toBe('refused FORBIDDEN');
      } finally {
        await client.close();
      }
    });
});
