import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer, definePlugin } from '@sluice/core';
import { captureLogger, createTestKit, textOf } from '@sluice/testing';
import '@sluice/http';

describe('extendSdk()', () => {
  it('serves resources and prompts beside the tools, in-process and over stateless HTTP', async () => {
    const server = createServer({ name: 'docs', version: '1', logger: captureLogger().logger });
    server.tool({ name: 'ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
    server.extendSdk((sdk) => {
      sdk.registerResource('readme', 'docs://readme', { mimeType: 'text/plain' }, async (uri) => ({
        contents: [{ uri: uri.href, text: 'read me' }],
      }));
      sdk.registerPrompt('greet', { description: 'Says hello' }, () => ({
        messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }],
      }));
    });
    const listener = await server.listen();
    for (const mode of ['legacy', { pin: '2026-07-28' }] as const) {
      const client = new Client({ name: 'c', version: '1' }, { versionNegotiation: { mode } });
      await client.connect(new StreamableHTTPClientTransport(listener.url));
      expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['docs://readme']);
      expect((await client.readResource({ uri: 'docs://readme' })).contents[0]).toMatchObject({ text: 'read me' });
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet']);
      expect(textOf((await client.callTool({ name: 'ping', arguments: {} })) as never)).toBe('pong');
      await client.close();
    }
    await server.close();
  });
});

describe('plugin close()', () => {
  it('closes plugins in reverse order after running calls drain', async () => {
    const closed: string[] = [];
    const plugin = (name: string) =>
      definePlugin({ name, version: '1.0.0', apply: () => {}, close: () => void closed.push(name) });
    const kit = await createTestKit({ plugins: [plugin('first'), plugin('second')], tools: [] });
    await kit.close();
    expect(closed).toEqual(['second', 'first']);
  });

  it('logs a plugin whose close throws and still closes the others', async () => {
    const closed: string[] = [];
    const kit = await createTestKit({
      plugins: [
        definePlugin({ name: 'ok', version: '1.0.0', apply: () => {}, close: () => void closed.push('ok') }),
        definePlugin({
          name: 'bad',
          version: '1.0.0',
          apply: () => {},
          close: () => {
            throw new Error('stuck');
          },
        }),
      ],
    });
    await kit.close();
    expect(closed).toEqual(['ok']);
    expect(kit.logs.events('plugin.failed')[0]).toMatchObject({ plugin: 'bad', hook: 'close' });
  });
});
