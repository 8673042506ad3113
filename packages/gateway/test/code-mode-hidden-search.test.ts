// A caller granted scripts but not the search tool: inside its scripts the search tool must be what it is outside,
// a tool that does not exist. A real `sluice serve` over loopback HTTP with authz, tool search and code mode; one
// key granted the search tool and one not, each asking its scripts and its binding files what is there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { textOf } from '@sluice/testing';
import { FIXTURE_UPSTREAM, call, httpClient, rpcFailure, serve } from './helpers.js';
import type { Served } from './helpers.js';

const KEY = 'code-mode-hidden-search-key-0123456789';
const SCRIPTS = ['execute_code', 'list_tool_files', 'read_tool_file', 'get_tool_docs'];

let gateway: Served;
beforeAll(async () => {
  gateway = await serve({
    listen: {
      http: {
        port: 0,
        auth: {
          type: 'apiKeys',
          keys: [
            { name: 'finder', key: `${KEY}-finder`, scopes: ['find'] },
            { name: 'scripter', key: `${KEY}-scripter`, scopes: ['script'] },
          ],
        },
      },
    },
    upstreams: [
      {
        name: 'fx',
        namespace: 'fx',
        connection: { type: 'stdio', command: process.execPath, args: [FIXTURE_UPSTREAM] },
      },
    ],
    plugins: {
      authz: {
        rules: [
          { when: { scopes: ['find'] }, allow: ['fx_echo', 'search_tools', 'describe_tools', ...SCRIPTS] },
          { when: { scopes: ['script'] }, allow: ['fx_echo', ...SCRIPTS] },
        ],
      },
      toolSearch: {},
      codeMode: {},
    },
  });
}, 60_000);
afterAll(() => gateway.stop());

const clientOf = (who: 'finder' | 'scripter'): Promise<Client> =>
  httpClient(gateway.url, { authorization: `Bearer ${KEY}-${who}` });

/** What a script returned (failing the test when the script itself failed). */
async function script(client: Client, code: string): Promise<unknown> {
  const result: CallToolResult = await call(client, 'execute_code', { code });
  expect(result.isError, textOf(result)).toBeFalsy();
  return (result.structuredContent as { result: unknown }).result;
}

/** The error a script's expression throws, as the script sees it, or what it resolved to. */
const thrown = (expression: string) =>
  `try { return { resolved: await ${expression} }; } catch (e) { return { name: e.name, code: e.code, message: e.message }; }`;

describe('tools.search in a script follows what its caller may call', () => {
  it('a caller granted the search tool has tools.search, declared in its runtime.d.ts, and finds with it', async () => {
    const client = await clientOf('finder');
    try {
      expect(await script(client, 'return [typeof tools, typeof tools.search];')).toEqual(['object', 'function']);
      expect(await script(client, "return (await tools.search('echo its text')).map((t) => t.name);")).toContain(
        'fx_echo',
      );
      const runtime = textOf(await call(client, 'read_tool_file', { path: 'runtime.d.ts' }));
      expect(runtime).toContain('declare const tools: {');
      expect(runtime).toContain('search(query: string, limit?: number)');
    } finally {
      await client.close();
    }
  });

  it('a caller not granted it has no tools global, and its runtime.d.ts declares none', async () => {
    const client = await clientOf('scripter');
    try {
      // Directly, the search tool does not exist for this caller.
      expect((await rpcFailure(call(client, 'search_tools', { query: 'echo' }))).data).toEqual({
        code: 'UNKNOWN_TOOL',
      });
      expect(await script(client, 'return typeof tools;')).toBe('undefined');
      const runtime = textOf(await call(client, 'read_tool_file', { path: 'runtime.d.ts' }));
      expect(runtime).not.toContain('declare const tools');
      expect(runtime).not.toContain('search(');
      // The rest of the runtime is declared as for anyone.
      expect(runtime).toContain('declare function callTool(name: string');
    } finally {
      await client.close();
    }
  });

  it('from a script, the hidden search tool is answered exactly as a tool that does not exist', async () => {
    const client = await clientOf('scripter');
    try {
      const answer = async (name: string) => {
        const seen = (await script(client, thrown(`callTool(${JSON.stringify(name)}, { query: 'echo' })`))) as Record<
          string,
          unknown
        >;
        return { ...seen, message: String(seen.message).replaceAll(name, '<name>') };
      };
      const hidden = await answer('search_tools');
      expect(hidden).toEqual(await answer('missing_tools'));
      expect(hidden).toMatchObject({ name: 'ToolError', code: 'TOOL_NOT_AVAILABLE' });
    } finally {
      await client.close();
    }
  });
});
