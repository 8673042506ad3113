// Code mode on a server with tool search: a script finds tools with
// `tools.search(query)`, through the same index and the same per-caller
// filtering as `search_tools`, then calls what it found.
import { afterEach, describe, expect, it } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { Stage, createServer, definePlugin } from '@sluice/core';
import type { CallToolResult, Plugin, SluiceServer } from '@sluice/core';
import { textOf } from '@sluice/testing';
import { codeMode } from '@sluice/plugin-code-mode';
import { toolSearch } from '@sluice/plugin-tool-search';

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function serve(plugins: Plugin[]): Promise<{ server: SluiceServer; script: (code: string) => Promise<unknown> }> {
  const server = createServer({ name: 'ops', version: '1.0.0', plugins });
  server.tool({
    name: 'get_forecast',
    description: 'Get the weather forecast for a city.',
    handler: (args) => text(`sunny in ${String(args.city)}`),
  });
  server.tool({
    name: 'delete_repository',
    description: 'Delete a repository permanently.',
    handler: () => text('gone'),
  });
  const client = new Client({ name: 'model', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  open.push({ close: () => client.close() }, server);
  const script = async (code: string): Promise<unknown> => {
    const result = await client.callTool({ name: 'execute_code', arguments: { code } });
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { result: unknown }).result;
  };
  return { server, script };
}

describe('tools.search in a code-mode script', () => {
  it('finds a tool and calls it by the name it found', async () => {
    const { script } = await serve([codeMode(), toolSearch({ alwaysVisible: ['execute_code'] })]);
    const result = await script(
      "const [first] = await tools.search('weather forecast for Lyon'); return { first: first.name, summary: first.summary, answer: await callTool(first.name, { city: 'Lyon' }) };",
    );
    expect(result).toEqual({
      first: 'get_forecast',
      summary: 'Get the weather forecast for a city.',
      answer: 'sunny in Lyon',
    });
  });

  it('never finds a tool the caller may not call', async () => {
    // A deny list, as the gateway's filters are: hidden from tools/list and refused.
    const guard = definePlugin({
      name: 'deny',
      version: '1.0.0',
      apply: ({ hooks }) => {
        hooks.listTools.tap({ name: 'deny', stage: Stage.FILTER }, (tools) =>
          tools.filter((t) => t.name !== 'delete_repository'),
        );
      },
    });
    const { script } = await serve([guard, codeMode(), toolSearch()]);
    expect(await script("return (await tools.search('delete a repository', 25)).map((t) => t.name);")).not.toContain(
      'delete_repository',
    );
  });

  it('is absent when the server has no tool search', async () => {
    const { script } = await serve([codeMode()]);
    expect(await script('return typeof tools;')).toBe('undefined');
  });
});
