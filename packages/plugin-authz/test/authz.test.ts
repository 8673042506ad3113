// Per-caller tool policy through a real listener with API keys and a real
// SDK client: what each caller sees, what it may call directly, through a
// chain and through ctx.call(); and that a tool it may not call is answered
// exactly as a tool that does not exist, whatever it sends.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import fc from 'fast-check';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CoreErrorCode, createJsonLogger, readRefusal } from '@sluice/core';
import { createServer } from '@sluice/core';
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
/** A name no tool has: what a caller gets for it is what "does not exist" looks like. */
const MISSING = 'no_such_note';

let server: SluiceServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The log lines the server wrote, parsed. */
let lines: Record<string, unknown>[] = [];

function build(options: AuthzOptions = { rules }): SluiceServer {
  lines = [];
  const logger = createJsonLogger({ write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const built = createServer({
    name: 'notes',
    version: '1.0.0',
    plugins: [authz(options), chaining()],
    logger,
  });
  const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
  built.tool({ name: 'read_note', handler: () => text('a note') });
  built.tool({ name: 'lookup', handler: () => withNext(text('found'), 'write_note', { text: 'from a chain' }) });
  built.tool({ name: 'read_then_missing', handler: () => withNext(text('found'), MISSING, { text: 'from a chain' }) });
  built.tool({
    name: 'read_and_touch',
    handler: async (_args, ctx) => ctx.call('write_note', { text: 'from ctx.call' }),
  });
  built.tool({ name: 'read_and_miss', handler: async (_args, ctx) => ctx.call(MISSING, { text: 'from ctx.call' }) });
  built.tool({
    name: 'write_note',
    inputSchema: z.object({ text: z.string().max(10) }),
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

const call = (client: Client, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) =>
  client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallToolResult>;

/** The JSON-RPC error a request failed with, as the client read it; throws if it was answered. */
async function rpcFailure(request: Promise<unknown>): Promise<{ code: unknown; message: unknown; data: unknown }> {
  try {
    await request;
  } catch (error) {
    const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
    return { code, message, data };
  }
  throw new Error('the request was answered, not refused');
}

/** Anything, with one name replaced by a placeholder: two answers about two names compare as one. */
const named = (value: unknown, name: string): unknown =>
  JSON.parse(JSON.stringify(value ?? null).replaceAll(name, '<name>')) as unknown;

const unknownTool = (name: string) => ({
  code: -32602,
  message: `Unknown tool: "${name}"`,
  data: { code: CoreErrorCode.UNKNOWN_TOOL },
});

describe('authz', () => {
  it('shows a caller with scope read only the read tools', async () => {
    const reader = await connect(READ_KEY);
    expect((await reader.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'lookup',
      'read_and_miss',
      'read_and_touch',
      'read_note',
      'read_then_missing',
    ]);
    await reader.close();
  });

  it('answers a read-scoped caller calling a write tool exactly as a call of a tool that does not exist, and lets a writer call it', async () => {
    const reader = await connect(READ_KEY);
    const hidden = await rpcFailure(call(reader, 'write_note', { text: 'x' }));
    expect(hidden).toEqual(unknownTool('write_note'));
    expect(named(hidden, 'write_note')).toEqual(named(await rpcFailure(call(reader, MISSING, { text: 'x' })), MISSING));
    // Operators still see the refusal.
    expect(lines).toContainEqual(
      expect.objectContaining({ event: 'authz.forbidden', tool: 'write_note', caller: 'reader' }),
    );
    await reader.close();
    const writer = await connect(WRITE_KEY);
    expect((await call(writer, 'write_note', { text: 'x' })).content).toEqual([{ type: 'text', text: 'wrote x' }]);
    await writer.close();
  });

  it("answers so before the arguments are checked: a hidden tool's schema and the bounds of its request tell nothing", async () => {
    const reader = await connect(READ_KEY);
    const manyKeys = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, i]));
    const deep = JSON.parse(`${'{"a":'.repeat(80)}1${'}'.repeat(80)}`) as Record<string, unknown>;
    const sent: [Record<string, unknown>, Record<string, unknown> | undefined][] = [
      [{}, undefined],
      [{ text: 5 }, undefined],
      [{ text: 'far longer than ten characters' }, undefined],
      [{ text: 'x' }, manyKeys],
      [deep, undefined],
    ];
    for (const [args, meta] of sent) {
      const hidden = await rpcFailure(call(reader, 'write_note', args, meta));
      const missing = await rpcFailure(call(reader, MISSING, args, meta));
      expect(named(hidden, 'write_note'), JSON.stringify(args).slice(0, 40)).toEqual(named(missing, MISSING));
    }
    await reader.close();
  });

  it('with hidden: forbidden, refuses a read-scoped caller a write tool with FORBIDDEN, naming the tool and the caller', async () => {
    server = build({ rules, hidden: 'forbidden' });
    const reader = await connect(READ_KEY);
    const refused = await call(reader, 'write_note', { text: 'x' });
    expect(refused.isError).toBe(true);
    expect(readRefusal(refused)).toMatchObject({ code: AuthzErrorCode.FORBIDDEN, plugin: 'authz' });
    expect((refused.content[0] as { text: string }).text).toContain('"reader"');
    expect((refused.content[0] as { text: string }).text).toContain('"write_note"');
    // Refused before its arguments are checked: not INVALID_ARGUMENTS.
    expect(readRefusal(await call(reader, 'write_note', { text: 5 }))).toMatchObject({ code: 'FORBIDDEN' });
    await reader.close();
  });

  it('stops a chained nextTool to a hidden tool as a chain to a tool that does not exist', async () => {
    const reader = await connect(READ_KEY);
    const hidden = await call(reader, 'lookup');
    const missing = await call(reader, 'read_then_missing');
    expect(JSON.stringify(hidden)).not.toContain('wrote from a chain');
    expect(JSON.stringify(hidden)).toContain('CHAIN_UNKNOWN_TOOL');
    // The same stop, but for the names (of the next tool, and of the tool that named it).
    const chain = (result: CallToolResult, next: string, origin: string) =>
      JSON.stringify(result.content).replaceAll(next, '<next>').replaceAll(origin, '<origin>');
    expect(chain(hidden, 'write_note', 'lookup')).toBe(chain(missing, MISSING, 'read_then_missing'));
    await reader.close();
  });

  it('with hidden: forbidden, refuses a chained nextTool to a write tool with FORBIDDEN', async () => {
    server = build({ rules, hidden: 'forbidden' });
    const reader = await connect(READ_KEY);
    const result = await call(reader, 'lookup');
    expect(JSON.stringify(result)).not.toContain('wrote from a chain');
    expect(JSON.stringify(result)).toContain(AuthzErrorCode.FORBIDDEN);
    await reader.close();
  });

  it('fails ctx.call() to a hidden tool as ctx.call() to a tool that does not exist', async () => {
    server = build({ rules: [{ when: { scopes: ['read'] }, allow: ['read_*'] }] });
    const reader = await connect(READ_KEY);
    const hidden = await rpcFailure(call(reader, 'read_and_touch'));
    expect(hidden).toEqual(unknownTool('write_note'));
    expect(named(hidden, 'write_note')).toEqual(named(await rpcFailure(call(reader, 'read_and_miss')), MISSING));
    await reader.close();
  });

  it('with hidden: forbidden, refuses ctx.call() to a tool the caller may not use with FORBIDDEN', async () => {
    server = build({ rules: [{ when: { scopes: ['read'] }, allow: ['read_*'] }], hidden: 'forbidden' });
    const reader = await connect(READ_KEY);
    const result = await call(reader, 'read_and_touch');
    expect(readRefusal(result)).toMatchObject({ code: AuthzErrorCode.FORBIDDEN });
    await reader.close();
  });

  it('lets anonymous in-process calls through by default; told to deny them, answers each as an unknown tool', async () => {
    server = build();
    expect((await server.call('write_note', { text: 'local' })).isError).toBeFalsy();
    await server.close();
    server = build({ rules, anonymous: 'deny' });
    const failure = async (name: string) => {
      const error = (await server!.call(name, {}).then(
        () => undefined,
        (e: unknown) => e,
      )) as { code?: unknown; message?: unknown; rpcCode?: unknown; plugin?: unknown; hook?: unknown };
      return {
        code: error.code,
        message: error.message,
        rpcCode: error.rpcCode,
        plugin: error.plugin,
        hook: error.hook,
      };
    };
    const hidden = await failure('read_note');
    expect(hidden).toMatchObject({ code: CoreErrorCode.UNKNOWN_TOOL, message: 'Unknown tool: "read_note"' });
    expect(named(hidden, 'read_note')).toEqual(named(await failure(MISSING), MISSING));
    await server.close();
    server = build({ rules, anonymous: 'deny', hidden: 'forbidden' });
    expect(readRefusal(await server.call('read_note', {}))).toMatchObject({ code: AuthzErrorCode.FORBIDDEN });
  });

  it('in audit mode lists and runs everything, logging what it would refuse', async () => {
    server = build({ rules, mode: 'audit' });
    const reader = await connect(READ_KEY);
    expect((await reader.listTools()).tools).toHaveLength(6);
    expect((await call(reader, 'write_note', { text: 'x' })).isError).toBeFalsy();
    expect(lines).toContainEqual(expect.objectContaining({ event: 'authz.forbidden', tool: 'write_note' }));
    await reader.close();
  });

  it('rejects a malformed selector at construction, naming the rule', () => {
    expect(() => authz({ rules: [{ allow: ['bad name!'] }] })).toThrow(/rules\.0\.allow\.0/);
  });
});

describe('a hidden tool is a tool that does not exist, whatever the caller sends', () => {
  it('answers any arguments and _meta for a hidden tool as for a missing one', async () => {
    server = build({ rules, anonymous: 'deny' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'prober', version: '1.0.0' });
    await client.connect(clientSide);
    const json = fc.jsonValue({ maxDepth: 4 });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('write_note', 'read_note', 'lookup'),
        fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 6 }),
        fc.option(fc.dictionary(fc.string({ maxLength: 8 }), json, { minKeys: 0, maxKeys: 140 }), { nil: undefined }),
        async (hiddenName, args, meta) => {
          const hidden = await rpcFailure(call(client, hiddenName, args, meta));
          const missing = await rpcFailure(call(client, MISSING, args, meta));
          expect(named(hidden, hiddenName)).toEqual(named(missing, MISSING));
        },
      ),
      { numRuns: 60 },
    );
    await client.close();
  });
});
