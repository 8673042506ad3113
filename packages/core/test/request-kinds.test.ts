// One guard, written once, meets every request kind: the kit's request recorder against a gateway
// with a local tool and an upstream serving a resource, a template, a prompt and completions.
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer } from '../src/index.js';
import type { SluiceServer } from '../src/index.js';
import { captureLogger, requestRecorder } from '../src/testing/index.js';
import type { RequestRecorderOptions } from '../src/testing/index.js';

function filesUpstream(): McpServer {
  const mcp = new McpServer({ name: 'files', version: '1.0.0' });
  mcp.registerResource('readme', 'file:///public/readme', {}, (uri) => ({ contents: [{ uri: uri.href, text: 'hi' }] }));
  mcp.registerResource(
    'files',
    new ResourceTemplate('file:///{+path}', { list: undefined, complete: { path: () => ['public/readme'] } }),
    {},
    (uri) => ({ contents: [{ uri: uri.href, text: `content of ${uri.href}` }] }),
  );
  mcp.registerPrompt('greet', { argsSchema: z.object({ who: z.string() }) }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `hello ${who}` } }],
  }));
  return mcp;
}

let server: SluiceServer | undefined;
afterEach(() => server?.close());

async function gatewayWith(options: RequestRecorderOptions) {
  const recorder = requestRecorder(options);
  server = createServer({ name: 'gw', version: '1.0.0', logger: captureLogger().logger, plugins: [recorder.plugin] });
  server.tool({ name: 'ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
  await server.import({ name: 'fs', namespace: 'fs', connection: { type: 'in-process', server: filesUpstream() } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'kinds', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, seen: recorder.seen };
}

describe('a guard written once', () => {
  it('sees tool calls, reads (direct and through a template), prompt gets and completions, with their targets', async () => {
    const { client, seen } = await gatewayWith({});
    await client.callTool({ name: 'ping', arguments: {} });
    await client.readResource({ uri: 'file:///public/readme' });
    await client.readResource({ uri: 'FILE://localhost/etc/../etc/hosts' });
    await client.getPrompt({ name: 'fs_greet', arguments: { who: 'ann' } });
    await client.complete({
      ref: { type: 'ref/resource', uri: 'file:///{+path}' },
      argument: { name: 'path', value: '' },
    });
    expect(seen.map(({ kind, upstream, target }) => ({ kind, upstream, target }))).toEqual([
      { kind: 'tools/call', upstream: undefined, target: 'ping' },
      { kind: 'resources/read', upstream: 'fs', target: 'file:///public/readme' },
      { kind: 'resources/read', upstream: 'fs', target: 'file:///etc/hosts' },
      { kind: 'prompts/get', upstream: 'fs', target: 'fs_greet' },
      { kind: 'completion/complete', upstream: 'fs', target: 'file:///{+path}' },
    ]);
  });

  it('refuses every kind it is told to, with its code: a tool result for a call, a JSON-RPC error otherwise', async () => {
    const { client } = await gatewayWith({ refuse: () => true });
    const call = await client.callTool({ name: 'ping', arguments: {} });
    expect(call.isError).toBe(true);
    expect(JSON.stringify(call)).toContain('REFUSED_BY_RECORDER');
    await expect(client.readResource({ uri: 'file:///etc/hosts' })).rejects.toThrow(/REFUSED_BY_RECORDER/);
    await expect(client.getPrompt({ name: 'fs_greet', arguments: { who: 'x' } })).rejects.toThrow(
      /REFUSED_BY_RECORDER/,
    );
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'fs_greet' }, argument: { name: 'who', value: '' } }),
    ).rejects.toThrow(/REFUSED_BY_RECORDER/);
  });
});
