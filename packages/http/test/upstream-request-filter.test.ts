import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import { CoreErrorCode, SluiceError, createServer } from '@sluice/core';
import { RequestFilterHeader, requestFilter } from '@sluice/upstream';
import type { HttpListener, PluginMode, SluiceServer } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import { call, connectClient } from '../../core/test/fixtures/upstream-helpers.js';
import '@sluice/http';
import '@sluice/upstream';

function upstream(name: string, tools: string[]): McpServer {
  const server = new McpServer({ name, version: '1' });
  for (const tool of tools)
    server.registerTool(tool, { description: `${tool} of ${name}` }, async () => ({
      content: [{ type: 'text', text: `${name}:${tool}` }],
    }));
  return server;
}

async function gateway(mode: PluginMode = 'enforce') {
  const logs = captureLogger();
  const server = createServer({
    name: 'gateway',
    version: '1.0.0',
    logger: logs.logger,
    plugins: [requestFilter({ mode })],
  });
  server.tool({ name: 'local', handler: () => ({ content: [{ type: 'text', text: 'local' }] }) });
  await server.import({
    name: 'alpha',
    namespace: 'alpha',
    connection: { type: 'in-process', server: upstream('alpha', ['read', 'write']) },
  });
  await server.import({
    name: 'beta',
    namespace: 'beta',
    connection: { type: 'in-process', server: upstream('beta', ['read']) },
  });
  const listener = await server.listen();
  return { server, listener, logs };
}

async function httpClient(listener: HttpListener, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'filtered', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(listener.url, { requestInit: { headers } }));
  return client;
}

async function visible(listener: HttpListener, headers: Record<string, string>): Promise<string[]> {
  const client = await httpClient(listener, headers);
  const names = (await client.listTools()).tools.map((t) => t.name).sort();
  await client.close();
  return names;
}

async function shutdown(server: SluiceServer, listener: HttpListener) {
  await listener.close();
  await server.close();
}

describe('per-request filtering by x-sluice-* headers over HTTP', () => {
  it('lists only the tools the include and exclude headers leave', async () => {
    const { server, listener } = await gateway();
    expect(await visible(listener, {})).toEqual(['alpha_read', 'alpha_write', 'beta_read', 'local']);
    expect(await visible(listener, { [RequestFilterHeader.INCLUDE_TOOLS]: '*_read' })).toEqual([
      'alpha_read',
      'beta_read',
    ]);
    expect(await visible(listener, { [RequestFilterHeader.EXCLUDE_TOOLS]: 'alpha_w*, local' })).toEqual([
      'alpha_read',
      'beta_read',
    ]);
    expect(await visible(listener, { [RequestFilterHeader.INCLUDE_SERVERS]: 'beta' })).toEqual(['beta_read']);
    expect(await visible(listener, { [RequestFilterHeader.EXCLUDE_SERVERS]: 'al*' })).toEqual(['beta_read', 'local']);
    expect(
      await visible(listener, {
        [RequestFilterHeader.INCLUDE_SERVERS]: 'alpha,beta',
        [RequestFilterHeader.EXCLUDE_TOOLS]: 'beta_?ead',
      }),
    ).toEqual(['alpha_read', 'alpha_write']);
    // An empty header filters nothing.
    expect(await visible(listener, { [RequestFilterHeader.INCLUDE_TOOLS]: ' , ' })).toEqual([
      'alpha_read',
      'alpha_write',
      'beta_read',
      'local',
    ]);
    await shutdown(server, listener);
  });

  it('refuses a call to a tool the request excluded with TOOL_NOT_AVAILABLE, and lets the others through', async () => {
    const { server, listener } = await gateway();
    const client = await httpClient(listener, { [RequestFilterHeader.EXCLUDE_SERVERS]: 'alpha' });
    const refused = await call(client, 'alpha_write');
    expect(refused.isError).toBe(true);
    expect(errorOf(refused)?.code).toBe(CoreErrorCode.TOOL_NOT_AVAILABLE);
    expect(textOf(refused)).toContain('x-sluice-exclude-servers');
    expect(textOf(await call(client, 'beta_read'))).toBe('beta:read');
    expect(textOf(await call(client, 'local'))).toBe('local');
    await client.close();
    await shutdown(server, listener);
  });

  it('filters nothing for transports without headers', async () => {
    const { server, listener } = await gateway();
    const { client } = await connectClient(server);
    expect((await client.listTools()).tools).toHaveLength(4);
    expect(textOf(await call(client, 'alpha_write'))).toBe('alpha:write');
    await client.close();
    await shutdown(server, listener);
  });

  it('in audit mode lists and calls everything, and logs what it would have refused', async () => {
    const { server, listener, logs } = await gateway('audit');
    const headers = { [RequestFilterHeader.INCLUDE_TOOLS]: 'beta_*' };
    expect(await visible(listener, headers)).toEqual(['alpha_read', 'alpha_write', 'beta_read', 'local']);
    const client = await httpClient(listener, headers);
    expect(textOf(await call(client, 'alpha_read'))).toBe('alpha:read');
    expect(logs.events('request_filter.audit')).not.toHaveLength(0);
    expect(logs.events('audit.refusal')).toMatchObject([
      { plugin: 'request-filter', code: CoreErrorCode.TOOL_NOT_AVAILABLE },
    ]);
    await client.close();
    await shutdown(server, listener);
  });

  it('rejects bad options at construction, naming the field', () => {
    let error: unknown;
    try {
      requestFilter({ mode: 'loud' as PluginMode });
    } catch (e) {
      error = e;
    }
    expect(SluiceError.is(error)).toBe(true);
    expect((error as SluiceError).code).toBe(CoreErrorCode.INVALID_OPTIONS);
    expect((error as SluiceError).message).toMatch(/mode/);
  });
});
