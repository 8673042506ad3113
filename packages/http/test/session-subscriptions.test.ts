// A 2025-11-25 session's resource subscriptions end with the session: whether the client ends it (DELETE),
// it is evicted to make room, or it expires, the gateway's upstream is unsubscribed from every URI no other
// session still wants.
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import type { ListenOptions, SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { eventually, memoUpstream } from '../../core/test/fixtures/upstream-helpers.js';
import '@sluice/http';
import '@sluice/upstream';

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

describe("a caller's subscriptions (attack: long URIs, many sessions)", () => {
  const HOG = 'subscription-hog-key-0123456789abcdef';
  const OTHER = 'subscription-other-key-0123456789abcd';
  const long = (n: number) => `memo://long/${n}-${'a'.repeat(8_000)}`;

  async function keyedSession(url: URL, key: string): Promise<Client> {
    const client = new Client({ name: 'subscriber', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    clients.push(client);
    return client;
  }

  it('holds one session to 65,536 characters of subscribed URIs', async () => {
    const { url, held } = await serve({ auth: { type: 'apiKeys', keys: [{ name: 'hog', key: HOG }] } });
    const hog = await keyedSession(url, HOG);
    for (let n = 0; n < 8; n++) await hog.subscribeResource({ uri: long(n) });
    await expect(hog.subscribeResource({ uri: long(8) })).rejects.toThrow(/at most 65536 characters/);
    expect(held.size).toBe(8);
    // Room comes back with an unsubscription.
    await hog.unsubscribeResource({ uri: long(0) });
    await hog.subscribeResource({ uri: long(8) });
    expect(held.has(long(8))).toBe(true);
  });

  it("charges subscriptions to the caller's share of session memory: its own sessions give way, not another's", async () => {
    // 16 sessions of 4 sessions' worth of memory in all; a caller's share is a quarter: one session's worth each,
    // about 16 KiB plus what it subscribes. Eight 8,000-character URIs cost some 380 KB in one session.
    const { url, held } = await serve({
      auth: {
        type: 'apiKeys',
        keys: [
          { name: 'hog', key: HOG },
          { name: 'other', key: OTHER },
        ],
      },
      maxSessions: 16,
      maxSessionMemoryBytes: 4 * 1024 * 1024,
    });
    const other = await keyedSession(url, OTHER);
    await other.subscribeResource({ uri: 'memo://one' });
    let refused = 0;
    let n = 0;
    for (let s = 0; s < 6; s++) {
      const hog = await keyedSession(url, HOG);
      for (let k = 0; k < 8; k++)
        await hog.subscribeResource({ uri: long(n++) }).catch((error: unknown) => {
          expect(String(error)).toMatch(/session memory has no room for this subscription/);
          refused++;
        });
    }
    // The hog's earlier sessions were evicted for its later ones, and gave their subscriptions back upstream:
    // what it holds stays within its share (1 MiB: at most 21 such URIs).
    await eventually(
      () => [...held].filter((uri) => uri.startsWith('memo://long/')).length <= 21,
      'the hog held to its share',
    );
    expect(refused).toBe(0);
    // The other caller's session and subscription are untouched.
    expect(held.has('memo://one')).toBe(true);
    await other.subscribeResource({ uri: 'memo://two' });
    expect(held.has('memo://two')).toBe(true);
  });
});
