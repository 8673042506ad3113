// Per-caller tool policy through a real listener with API keys and a real
// SDK client: what each caller sees, what it may call directly, through a
// chain and through ctx.call().
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer, readRefusal } from '@sluice/core';
import type { CallToolResult, SluiceServer } from '@sluice/core';
import type { ListenerAuthOptions } from '@sluice/http';
import { chaining, withNext } from '@sluice/plugin-chaining';
import { AuthzErrorCode, authz } from '@sluice/plugin-authz';
import type { AuthzOptions } from '@sluice/plugin-authz';
import '@sluice/http';

const READ_KEY = 'r'.repeat(24);
const WRITE_KEY = 'w'.repeat(24);
const auth: ListenerAuthOptions = {
  type: 'apiKeys',
  keys: [
    { name: 'reader', key: READ_KEY, scopes: ['read'] },
    { name: 'writer', key: WRITE_KEY, scopes: ['read', 'write'] },
  ],
};
const rules: AuthzOptions['rules'] = [
  { when: { scopes: ['read'] }, allow: ['read_*', 'lookup'] },
  { when: { scopes: ['write'] }, allow: ['write_*'] },
];

let server: SluiceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function build(options: AuthzOptions = { rules }): SluiceServer {
  const built = createServer({ name: 'notes', version: '1.0.0', plugins: [authz(options), chaining()] });
  const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
  built.tool({ name: 'read_note', handler: () => text('a note') });
  built.tool({ name: 'lookup', handler: () => withNext(text('found'), 'write_note', { text: 'from a chain' }) });
  built.tool({
    name: 'read_and_touch',
    handler: async (_args, ctx) => ctx.call('write_note', { text: 'from ctx.call' }),
  });
  built.tool({
    name: 'write_note',
    inputSchema: z.object({ text: z.string() }),
    handler: ({ text: t }) => text(`wrote ${t}`),
  });
  return built;
}

async function connect(key: string): Promise<Client> {
  server ??= build();
  const listener = await server.listen({ auth });
  const client = new Client({ name: 'caller', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(listener.url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

describe('authz', () => {
  it('shows a caller with scope read only the read tools', async () => {
    const reader = await connect(READ_KEY);
    expect((await reader.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'lookup',
      'read_and_touch',
      'read_note',
    ]);
    await reader.close();
  });

  it('refuses a read-scoped caller a write tool with FORBIDDEN, and lets a writer call it', async () => {
    const reader = await connect(READ_KEY);
    const refused = await call(reader, 'write_note', { text: 'x' });
    expect(refused.isError).toBe(true);
    expect(readRefusal(refused)).toMatchObject({ code: AuthzErrorCode.FORBIDDEN });
    expect((refused.content[0] as { text: string }).text).toContain('"reader"');
    await reader.close();
    const writer = await connect(WRITE_KEY);
    expect((await call(writer, 'write_note', { text: 'x' })).content).toEqual([{ type: 'text', text: 'wrote x' }]);
    await writer.close();
  });

  it('refuses a chained nextTool to a write tool for a read-scoped caller', async () => {
    const reader = await connect(READ_KEY);
    const result = await call(reader, 'lookup');
    expect(JSON.stringify(result)).not.toContain('wrote from a chain');
    expect(JSON.stringify(result)).toContain(AuthzErrorCode.FORBIDDEN);
    await reader.close();
  });

  it('refuses ctx.call() to a tool the caller may not use', async () => {
    server = build({ rules: [{ when: { scopes: ['read'] }, allow: ['read_*'] }] });
    const reader = await connect(READ_KEY);
    const result = await call(reader, 'read_and_touch');
    expect(readRefusal(result)).toMatchObject({ code: AuthzErrorCode.FORBIDDEN });
    await reader.close();
  });

  it('lets anonymous in-process calls through by default, and refuses them when told to', async () => {
    server = build();
    expect((await server.call('write_note', { text: 'local' })).isError).toBeFalsy();
    await server.close();
    server = build({ rules, anonymous: 'deny' });
    expect(readRefusal(await server.call('read_note', {}))).toMatchObject({ code: AuthzErrorCode.FORBIDDEN });
  });

  it('in audit mode lists and runs everything, logging what it would refuse', async () => {
    server = build({ rules, mode: 'audit' });
    const reader = await connect(READ_KEY);
    expect((await reader.listTools()).tools).toHaveLength(4);
    expect((await call(reader, 'write_note', { text: 'x' })).isError).toBeFalsy();
    await reader.close();
  });

  it('rejects a malformed selector at construction, naming the rule', () => {
    expect(() => authz({ rules: [{ allow: ['bad name!'] }] })).toThrow(/rules\.0\.allow\.0/);
  });
});
