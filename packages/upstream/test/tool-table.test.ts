import { describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/server';
import { createServer, definePlugin } from '@sluice/core';
import type { CatalogChange, Plugin, ToolCatalog, ToolSource } from '@sluice/core';
import { TestServer, captureLogger } from '@sluice/testing';
import '../src/index.js'; // gives every server import()

/** A plugin that hands out the catalog it is given and records every change it hears of. */
function watcher(): { plugin: Plugin; catalog: () => ToolCatalog; changes: CatalogChange[] } {
  let catalog: ToolCatalog | undefined;
  const changes: CatalogChange[] = [];
  const plugin = definePlugin({
    name: 'watcher',
    version: '1.0.0',
    apply({ tools }) {
      catalog = tools;
      tools.subscribe((change) => changes.push(change));
    },
  });
  return { plugin, catalog: () => catalog!, changes };
}

function upstreamWith(...names: string[]): McpServer {
  const server = new McpServer({ name: 'up', version: '1.0.0' });
  for (const name of names) server.registerTool(name, {}, async () => ({ content: [{ type: 'text', text: name }] }));
  return server;
}

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

describe('the tool catalog plugins see', () => {
  it('finds an imported tool by its exposed name and by its upstream and original name', async () => {
    const seen = watcher();
    const server = createServer({ name: 's', version: '1', plugins: [seen.plugin], logger: captureLogger().logger });
    await server.import({
      name: 'math',
      namespace: 'm',
      connection: { type: 'in-process', server: upstreamWith('add') },
    });
    const byName = seen.catalog().get('m_add');
    expect(byName?.source).toMatchObject({ kind: 'upstream', upstream: 'math', originalName: 'add' });
    expect(seen.catalog().byOrigin('math', 'add')).toBe(byName);
    expect(seen.catalog().byOrigin('math', 'm_add')).toBeUndefined();
    expect(seen.catalog().byOrigin('other', 'add')).toBeUndefined();
    await server.close();
  });

  it('reports a batch after the core settled it: a name taken by another source is skipped, not added', async () => {
    const seen = watcher();
    const server = createServer({ name: 's', version: '1', plugins: [seen.plugin], logger: captureLogger().logger });
    server.tool({ name: 'add', handler: () => text('local') });
    await server.ready();
    await server.import({ name: 'math', connection: { type: 'in-process', server: upstreamWith('add', 'mul') } });
    const last = seen.changes.at(-1)!;
    expect(last.added.map((t) => t.name)).toEqual(['mul']);
    expect(last.skipped).toEqual([expect.objectContaining({ name: 'add', by: 'core' })]);
    expect(seen.catalog().get('add')?.source.kind).toBe('local');
    expect(seen.catalog().byOrigin('math', 'add')).toBeUndefined();
    expect(seen.catalog().byOrigin('math', 'mul')?.name).toBe('mul');
    await server.close();
  });

  it('reports removed tools and forgets them', async () => {
    const seen = watcher();
    const server = new TestServer({ name: 's', version: '1', plugins: [seen.plugin], logger: captureLogger().logger });
    const source: ToolSource = { kind: 'upstream', upstream: 'u', originalName: 'x', trusted: false };
    const tool = {
      name: 'u_x',
      definition: { name: 'u_x', inputSchema: { type: 'object' as const } },
      policy: {},
      source,
    };
    await server.admit(source, [{ tool, base: async () => text('x') }]);
    expect(seen.catalog().byOrigin('u', 'x')?.name).toBe('u_x');
    server.removeTools(['u_x']);
    expect(seen.changes.at(-1)).toEqual({ added: [], removed: [tool], skipped: [] });
    expect(seen.catalog().get('u_x')).toBeUndefined();
    expect(seen.catalog().byOrigin('u', 'x')).toBeUndefined();
    expect(seen.catalog().names()).toEqual([]);
    await server.close();
  });

  it('stops calling a listener that unsubscribed, and logs a listener that throws without failing the import', async () => {
    const logs = captureLogger();
    let calls = 0;
    let stop: () => void = () => {};
    const plugin = definePlugin({
      name: 'fickle',
      version: '1.0.0',
      apply({ tools }) {
        stop = tools.subscribe(() => calls++);
        tools.subscribe(() => {
          throw new Error('listener bug');
        });
      },
    });
    const server = createServer({ name: 's', version: '1', plugins: [plugin], logger: logs.logger });
    server.tool({ name: 'a', handler: () => text('a') });
    await server.ready();
    expect(calls).toBe(1);
    expect(logs.records.some((r) => r.event === 'tools.subscriber_failed')).toBe(true);
    stop();
    server.tool({ name: 'b', handler: () => text('b') });
    await server.ready();
    expect(calls).toBe(1);
    expect(server.tools().map((t) => t.name)).toEqual(['a', 'b']);
    await server.close();
  });
});

describe('removeTool', () => {
  it('drops a local tool and leaves imported ones alone', async () => {
    const server = createServer({ name: 's', version: '1', logger: captureLogger().logger });
    server.tool({ name: 'mine', handler: () => text('mine') });
    await server.import({ name: 'up', connection: { type: 'in-process', server: upstreamWith('theirs') } });
    expect(server.removeTool('theirs')).toBe(false);
    expect(server.removeTool('mine')).toBe(true);
    expect(server.removeTool('mine')).toBe(false);
    expect(server.tools().map((t) => t.name)).toEqual(['theirs']);
    await server.close();
  });
});
