import { describe, expect, it } from 'vitest';
import { createServer, definePlugin } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, createTestKit } from '@sluice/testing';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { CodeModeEvent, codeMode } from '@sluice/plugin-code-mode';
import { EVERYTHING, orderLines, price, resultOf } from './helpers.js';
import '@sluice/upstream';

async function gateway(options: Parameters<typeof codeMode>[0] = {}) {
  const logs = captureLogger();
  const server = createServer({ name: 'shop', version: '1.0.0', logger: logs.logger, plugins: [codeMode(options)] });
  server.tool(orderLines).tool(price);
  await server.import({
    name: 'everything',
    namespace: 'ev',
    connection: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'model', version: '1.0.0' });
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
    client.callTool({ name, arguments: args });
  const close = async () => {
    await client.close();
    await server.close();
  };
  return { server, client, logs, call, close };
}

// The script a model writes once instead of six round trips: two local tools and one from server-everything.
const TOTAL = `
const { lines } = await local.order_lines({ orderId: 'o-1' });
const priced = await Promise.all(lines.map(async (line) => ({ ...line, cents: Number(await local.price({ sku: line.sku })) })));
const cents = priced.reduce((sum, line) => sum + line.qty * line.cents, 0);
const sum = await everything.get_sum({ a: cents, b: 500 });
console.log('lines', priced.length);
return { priced, cents, withShipping: sum };
`;

describe('a script that calls three tools, one imported over stdio from server-everything', () => {
  it('returns the combined result to a real SDK client', async () => {
    const g = await gateway();
    const result = await g.call('execute_code', { code: TOTAL });
    expect(resultOf(result)).toEqual({
      priced: [
        { sku: 'A-1', qty: 2, cents: 150 },
        { sku: 'B-7', qty: 3, cents: 40 },
      ],
      cents: 420,
      withShipping: 'The sum of 420 and 500 is 920.',
    });
    expect((result.structuredContent as { logs: string[] }).logs).toEqual(['lines 2']);
    await g.close();
  });

  it('records the script, each call and its outcome in the audit log', async () => {
    const g = await gateway();
    await g.call('execute_code', { code: TOTAL });
    const [record] = g.logs.events(CodeModeEvent.SCRIPT);
    expect(record).toMatchObject({ tool: 'execute_code', outcome: 'ok', source: TOTAL });
    expect((record!.calls as { tool: string; outcome: string }[]).map((c) => [c.tool, c.outcome]).sort()).toEqual([
      ['ev_get-sum', 'ok'],
      ['order_lines', 'ok'],
      ['price', 'ok'],
      ['price', 'ok'],
    ]);
    await g.close();
  });

  it('lists binding files per server, reads them, and gives one tool’s full docs', async () => {
    const g = await gateway();
    const listed = await g.call('list_tool_files');
    expect((listed.structuredContent as { files: string[] }).files).toEqual([
      'runtime.d.ts',
      'servers/local.d.ts',
      'servers/everything.d.ts',
    ]);
    const file = (await g.call('read_tool_file', { path: 'servers/local.d.ts' })).content[0] as { text: string };
    expect(file.text).toContain('declare namespace local {');
    expect(file.text).toContain('/** Returns the lines of an order. */');
    expect(file.text).toContain(
      'function order_lines(args: { orderId: string }): Promise<{ lines: { sku: string; qty: number }[] }>;',
    );
    expect(file.text).toContain('function price(args: { sku: string }): Promise<ToolText>;');
    expect(file.text).not.toContain('execute_code');
    const docs = (await g.call('get_tool_docs', { tool: 'everything.get_sum' })).content[0] as { text: string };
    expect(docs.text).toContain('everything.get_sum (exposed tool "ev_get-sum")');
    expect(docs.text).toContain('Input schema:');
    await g.close();
  });

  it('binds one file per tool at the tool binding level', async () => {
    const g = await gateway({ binding: 'tool' });
    const files = ((await g.call('list_tool_files')).structuredContent as { files: string[] }).files;
    expect(files).toContain('servers/local/order_lines.d.ts');
    expect(files).toContain('servers/everything/echo.d.ts');
    const echo = (await g.call('read_tool_file', { path: 'servers/everything/echo.d.ts' })).content[0] as {
      text: string;
    };
    expect(echo.text).toMatch(/function echo\(args: \{ message: string \}\): Promise<ToolText>;/);
    expect(echo.text).not.toContain('get_sum');
    await g.close();
  });

  it('hides every tool but the meta-tools from tools/list when asked, and scripts still call them', async () => {
    const g = await gateway({ expose: 'meta-tools' });
    const names = (await g.client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['execute_code', 'get_tool_docs', 'list_tool_files', 'read_tool_file']);
    expect(resultOf(await g.call('execute_code', { code: 'return await everything.echo({ message: "hi" })' }))).toBe(
      'Echo: hi',
    );
    await g.close();
  });

  it('answers a refused or failed call inside the script as a ToolError it can catch', async () => {
    const g = await gateway();
    const result = await g.call('execute_code', {
      code: `try { await local.price({ sku: 42 }); } catch (e) { return { isToolError: e instanceof ToolError, code: e.code }; }`,
    });
    expect(resultOf(result)).toEqual({ isToolError: true, code: 'INVALID_ARGUMENTS' });
    await g.close();
  });
});

describe('events', () => {
  it('raises settled for the script and for each of its calls, with the script as their parent', async () => {
    const seen: string[] = [];
    const observer = definePlugin({
      name: 'observer',
      version: '1.0.0',
      apply: ({ hooks }) =>
        hooks.settled.tap('observer', (ctx, outcome) =>
          seen.push(`${ctx.parent ? `${ctx.parent.tool.name} > ` : ''}${ctx.tool.name}: ${outcome.status}`),
        ),
    });
    const kit = await createTestKit({ plugins: [codeMode(), observer], tools: [price] });
    await kit.call('execute_code', {
      code: 'await local.price({ sku: "A-1" }); return await local.price({ sku: "B-7" });',
    });
    expect(seen).toEqual(['execute_code > price: ok', 'execute_code > price: ok', 'execute_code: ok']);
    await kit.close();
  });
});
