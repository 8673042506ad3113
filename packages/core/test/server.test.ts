import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CoreErrorCode, SluiceError, createServer } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, createTestKit, errorOf, textOf } from '../../testing/src/index.js';

const echo = {
  name: 'echo',
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }: { text: string }) => ({ content: [{ type: 'text' as const, text }] }),
};

describe('tools', () => {
  it('accepts a JSON Schema input and validates against it', async () => {
    const kit = await createTestKit({
      tools: [
        {
          name: 'json',
          inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          handler: (args: Record<string, unknown>) => ({ content: [{ type: 'text', text: String(args.n) }] }),
        },
      ],
    });
    const [tool] = await kit.listTools();
    expect(tool?.inputSchema).toMatchObject({ type: 'object', required: ['n'] });
    expect(textOf(await kit.call('json', { n: 4 }))).toBe('4');
    const bad = await kit.call('json', { n: 'four' });
    expect(errorOf(bad)?.code).toBe(CoreErrorCode.INVALID_ARGUMENTS);
    await kit.close();
  });

  it('lists zod schemas as JSON Schema with output schema and annotations', async () => {
    const kit = await createTestKit({
      tools: [
        {
          name: 'typed',
          title: 'Typed',
          description: 'Returns a count',
          inputSchema: z.object({ q: z.string().describe('query') }),
          outputSchema: z.object({ count: z.number() }),
          annotations: { readOnlyHint: true },
          handler: () => ({ content: [{ type: 'text', text: '1' }], structuredContent: { count: 1 } }),
        },
      ],
    });
    const [tool] = await kit.listTools();
    expect(tool).toMatchObject({
      name: 'typed',
      title: 'Typed',
      inputSchema: { type: 'object', properties: { q: { type: 'string', description: 'query' } } },
      outputSchema: { type: 'object', properties: { count: { type: 'number' } } },
      annotations: { readOnlyHint: true },
    });
    expect((await kit.call('typed', { q: 'x' })).structuredContent).toEqual({ count: 1 });
    await kit.close();
  });

  it('turns a handler that throws into a TOOL_ERROR result the model can read', async () => {
    const kit = await createTestKit({
      tools: [
        {
          name: 'fails',
          handler: () => {
            throw new Error('database is down');
          },
        },
      ],
    });
    const result = await kit.call('fails');
    expect(result.isError).toBe(true);
    expect(errorOf(result)?.code).toBe(CoreErrorCode.TOOL_ERROR);
    expect(textOf(result)).toContain('database is down');
    await kit.close();
  });

  it('refuses duplicate and malformed tool definitions at registration', () => {
    const server = createServer({ name: 's', version: '1', logger: captureLogger().logger });
    server.tool(echo);
    expect(() => server.tool(echo)).toThrow(expect.objectContaining({ code: CoreErrorCode.DUPLICATE_TOOL }) as unknown);
    expect(() => server.tool({ ...echo, name: 'has space' })).toThrow(/invalid/);
    expect(() => server.tool({ name: 'nohandler' } as never)).toThrow(/no handler/);
    expect(() => server.tool({ ...echo, name: 'arr', inputSchema: { type: 'array' } } as never)).toThrow(
      /must describe an object/,
    );
  });
});

describe('bad input', () => {
  it('answers an unknown tool with -32602 and keeps serving', async () => {
    const kit = await createTestKit({ tools: [echo] });
    await expect(kit.call('nope')).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool') as unknown,
    });
    expect(textOf(await kit.call('echo', { text: 'alive' }))).toBe('alive');
    await kit.close();
  });

  it('answers arguments that fail the schema with an INVALID_ARGUMENTS result naming the field', async () => {
    const kit = await createTestKit({ tools: [echo] });
    const result = await kit.call('echo', { text: 42 });
    expect(result.isError).toBe(true);
    expect(errorOf(result)?.code).toBe(CoreErrorCode.INVALID_ARGUMENTS);
    expect(textOf(result)).toMatch(/text: /);
    await kit.close();
  });

  it('answers a _meta of the wrong shape with -32602', async () => {
    const kit = await createTestKit({ tools: [echo] });
    const tooMany = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]));
    await expect(kit.call('echo', { text: 'x' }, tooMany)).rejects.toMatchObject({ code: -32602 });
    await expect(kit.server.call('echo', { text: 'x' }, { meta: [] as never })).rejects.toMatchObject({
      code: CoreErrorCode.INVALID_PARAMS,
    });
    await expect(kit.server.call('echo', 'not-an-object' as never)).rejects.toMatchObject({
      code: CoreErrorCode.INVALID_PARAMS,
    });
    expect(textOf(await kit.call('echo', { text: 'fine' }))).toBe('fine');
    await kit.close();
  });

  it('drops __proto__ from _meta so it cannot reach a prototype', async () => {
    let seen: unknown;
    const kit = await createTestKit({
      tools: [{ name: 'peek', handler: (_a: unknown, ctx) => ((seen = ctx.meta), { content: [] }) }],
    });
    await kit.server.call(
      'peek',
      {},
      { meta: JSON.parse('{"__proto__":{"polluted":true},"ok":1}') as Record<string, unknown> },
    );
    expect(Object.getPrototypeOf(seen)).toBeNull();
    expect(Object.keys(seen as object)).toEqual(['ok']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await kit.close();
  });

  it('handles a 10 MB argument in-process without falling over', async () => {
    const kit = await createTestKit({
      tools: [
        {
          ...echo,
          handler: ({ text }: { text: string }) => ({ content: [{ type: 'text', text: String(text.length) }] }),
        },
      ],
    });
    const big = 'y'.repeat(10 * 1024 * 1024);
    expect(textOf(await kit.call('echo', { text: big }))).toBe(String(big.length));
    await kit.close();
  });

  it('refuses calls after close() with SERVER_CLOSED', async () => {
    const kit = await createTestKit({ tools: [echo] });
    await kit.close();
    const failure = await kit.server.call('echo', { text: 'late' }).catch((e: unknown) => e);
    expect(SluiceError.is(failure) && failure.code).toBe(CoreErrorCode.SERVER_CLOSED);
    expect(() => kit.server.tool({ ...echo, name: 'late' })).toThrow(/closed/);
  });

  it('answers a request on a closed connection with a clear client error', async () => {
    const kit = await createTestKit({ tools: [echo] });
    await kit.server.close();
    await expect(kit.call('echo', { text: 'x' })).rejects.toThrow();
    await kit.client.close();
  });
});

describe('in-process calls', () => {
  it('server.call runs the pipeline and passes meta and signal', async () => {
    let seen: { meta: unknown; aborted: boolean } | undefined;
    const kit = await createTestKit({
      tools: [
        {
          name: 'peek',
          handler: (_a: unknown, ctx) => (
            (seen = { meta: ctx.meta.trace, aborted: ctx.signal.aborted }),
            { content: [] }
          ),
        },
      ],
    });
    const controller = new AbortController();
    const result: CallToolResult = await kit.server.call(
      'peek',
      {},
      { meta: { trace: 't-1' }, signal: controller.signal },
    );
    expect(result.content).toEqual([]);
    expect(seen).toEqual({ meta: 't-1', aborted: false });
    await kit.close();
  });
});

describe('what a call that cannot run is answered with', () => {
  it('refuses a tool name the specification does not allow, and a definition without a handler, with INVALID_TOOL', () => {
    const server = createServer({ name: 's', version: '1', logger: captureLogger().logger });
    const invalidTool = expect.objectContaining({ code: CoreErrorCode.INVALID_TOOL }) as unknown as Error;
    expect(() => server.tool({ ...echo, name: 'has space' })).toThrow(invalidTool);
    expect(() => server.tool({ name: 'nohandler' } as never)).toThrow(invalidTool);
  });

  it('rejects an in-process call of a tool it does not expose with UNKNOWN_TOOL', async () => {
    const kit = await createTestKit({ tools: [echo] });
    await expect(kit.server.call('nope')).rejects.toMatchObject({
      code: CoreErrorCode.UNKNOWN_TOOL,
      message: 'Unknown tool: "nope"',
    });
    await kit.close();
  });

  it('fails a handler that returns something other than a tool result, or breaks its output schema, with INVALID_RESULT', async () => {
    const kit = await createTestKit({
      tools: [
        { name: 'shapeless', handler: () => ({ answer: 42 }) as never },
        {
          name: 'liar',
          outputSchema: z.object({ n: z.number() }),
          handler: () => ({ content: [], structuredContent: { n: 'one' } }),
        },
      ],
    });
    await expect(kit.server.call('shapeless')).rejects.toMatchObject({ code: CoreErrorCode.INVALID_RESULT });
    await expect(kit.server.call('liar')).rejects.toMatchObject({
      code: CoreErrorCode.INVALID_RESULT,
      message: expect.stringContaining('breaks its output schema') as unknown,
    });
    await kit.close();
  });

  it('ends a call whose caller aborted it with CANCELLED', async () => {
    const kit = await createTestKit({
      tools: [
        {
          name: 'waits',
          handler: (_args, ctx) =>
            new Promise<CallToolResult>((_resolve, reject) =>
              ctx.signal.addEventListener('abort', () => reject(new Error('stopped'))),
            ),
        },
      ],
    });
    const controller = new AbortController();
    const call = kit.server.call('waits', {}, { signal: controller.signal });
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: CoreErrorCode.CANCELLED, message: 'The call was cancelled' });
    await kit.close();
  });
});

describe('the SDK server package, loaded with the server', () => {
  it('is not there for createSdkServer() before anything was awaited, and is once ready() resolves', () => {
    // A fresh process: in this one, earlier servers have loaded it already.
    const run = spawnSync(
      process.execPath,
      [
        '--conditions=sluice:source',
        '--import',
        'tsx',
        fileURLToPath(new URL('./fixtures/create-sdk-server-early.ts', import.meta.url)),
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ early: CoreErrorCode.INVALID_STATE, late: 'function' });
  });
});

describe('serving HTTP without @sluice/http', () => {
  it('listen() refuses with INVALID_STATE and names the package to import', async () => {
    const server = createServer({ name: 's', version: '1', logger: captureLogger().logger });
    const refused = await server.listen().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(SluiceError);
    expect((refused as SluiceError).code).toBe(CoreErrorCode.INVALID_STATE);
    expect((refused as SluiceError).message).toContain("import '@sluice/http'");
    await server.close();
  });
});

describe('importing upstreams without @sluice/upstream', () => {
  it('import() refuses with INVALID_STATE and names the package to import', async () => {
    const server = createServer({ name: 's', version: '1', logger: captureLogger().logger });
    // Core's ImportOptions is empty until @sluice/upstream is imported: any object type-checks here.
    const refused = await server.import({ name: 'up' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(SluiceError);
    expect((refused as SluiceError).code).toBe(CoreErrorCode.INVALID_STATE);
    expect((refused as SluiceError).message).toContain("import '@sluice/upstream'");
    expect(server.upstreams()).toEqual([]);
    expect(server.features).toBeUndefined();
    await server.close();
  });
});
