// A 2025-11-25 session's resource subscriptions end with the session: whether the client ends it (DELETE),
// it is evicted to make room, or it expires, the gateway's upstream is unsubscribed from every URI no other
// session still wants.
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/server';
import { createServer } from '@sluice/core';
import type { ListenOptions, SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { eventually } from '../../core/test/fixtures/upstream-helpers.js';
import '@sluice/http';
import '@sluice/upstream';

/** An upstream whose resources can be subscribed to; `held` is what the gateway is subscribed to there now. */
function memoUpstream(): { server: Server; held: Set<string> } {
  const held = new Set<string>();
  const server = new Server({ name: 'memo', version: '1.0.0' }, { capabilities: { resources: { subscribe: true } } });
  const uris = ['memo://one', 'memo://two'];
  server.setRequestHandler('resources/list', () => ({ resources: uris.map((uri) => ({ uri, name: uri })) }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
  server.setRequestHandler('resources/read', (request) => ({
    contents: [{ uri: request.params.uri, text: `memo ${request.params.uri}` }],
  }));
  server.setRequestHandler('resources/subscribe', (request) => {
    held.add(request.params.uri);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', (request) => {
    held.delete(request.params.uri);
    return {};
  });
  return { server, held };
}

let gateway: SluiceServer | undefined;
const clients: Client[] = [];

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await gateway?.close();
  gateway = undefined;
});

async function serve(options: ListenOptions = {}): Promise<{ url: URL; held: Set<string> }> {
  const upstream = memoUpstream();
  gateway = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
  await gateway.import({ name: 'memo', connection: { type: 'in-process', server: upstream.server } });
  const listener = await gateway.listen(options);
  return { url: listener.url, held: upstream.held };
}

async function session(url: URL): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'subscriber', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const sorted = (held: Set<string>) => [...held].sort();

describe("a closed 2025-11-25 session's subscriptions", () => {
  it('are given back when the client ends the session: the upstream keeps only what another session wants', async () => {
    const { url, held } = await serve();
    const first = await session(url);
    const second = await session(url);
    await first.client.subscribeResource({ uri: 'memo://one' });
    await first.client.subscribeResource({ uri: 'memo://two' });
    await second.client.subscribeResource({ uri: 'memo://one' });
    expect(sorted(held)).toEqual(['memo://one', 'memo://two']);
    await first.transport.terminateSession();
    await eventually(() => !held.has('memo://two'), 'memo://two unsubscribed upstream');
    expect(sorted(held)).toEqual(['memo://one']);
    await second.transport.terminateSession();
    await eventually(() => held.size === 0, 'memo://one unsubscribed upstream');
  });

  it('are given back when the session is evicted to make room', async () => {
    const { url, held } = await serve({ maxSessions: 1 });
    const first = await session(url);
    await first.client.subscribeResource({ uri: 'memo://one' });
    expect(sorted(held)).toEqual(['memo://one']);
    await session(url);
    await eventually(() => held.size === 0, 'the evicted session unsubscribed upstream');
  });

  it('are given back when the session expires', async () => {
    const { url, held } = await serve({ sessionIdleMs: 300 });
    const first = await session(url);
    await first.client.subscribeResource({ uri: 'memo://two' });
    expect(sorted(held)).toEqual(['memo://two']);
    await eventually(() => held.size === 0, 'the expired session unsubscribed upstream');
  });
});
