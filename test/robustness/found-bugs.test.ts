// Bugs the robustness harness found, each as the smallest test that shows it.
// They fail until the bug is fixed; the fix lands with its test. The fuzz
// properties in fuzz.test.ts find the same bugs at random.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnHttpServer, spawnServer, startedChildren } from './child.js';
import type { ServerChild } from './child.js';
import { ENVELOPE, isResponse, modernHeaders, post } from './rpc.js';
import { StdioPeer } from './stdio-peer.js';

describe('stdio: a well-formed request whose params break the message schema', () => {
  let server: ServerChild;
  const children = startedChildren();
  let peer: StdioPeer;
  beforeAll(async () => {
    server = children.add(spawnServer('stdio'));
    peer = new StdioPeer(server.child.stdin, server.child.stdout);
    await peer.request('discover', 'server/discover', { _meta: ENVELOPE });
  }, 30_000);
  afterAll(() => children.stopAll());

  // core/src/stdio.ts hands lines to the SDK's stdio transport, which drops a
  // line that fails its JSON-RPC schema (here: a progress token that is a
  // boolean) after reporting it to onerror: the client waits forever.
  it('is answered with a JSON-RPC error carrying its id, not dropped', async () => {
    const answer = await peer.request(
      'bad-token',
      'tools/call',
      { name: 'echo', arguments: {}, _meta: { ...ENVELOPE, progressToken: false } },
      5_000,
    );
    expect(answer.id).toBe('bad-token');
    expect(answer.error?.code).toBeOneOf([-32600, -32602]);
  });
});

describe('HTTP: edge cases of the request routing', () => {
  let server: ServerChild & { url: URL };
  const children = startedChildren();
  beforeAll(async () => {
    server = children.add(await spawnHttpServer());
  }, 30_000);
  afterAll(() => children.stopAll());

  // core/src/http.ts answers 413 before the body is read, and the connection is
  // torn down while the client is still sending: the client often gets EPIPE or
  // ECONNRESET instead of the answer.
  it('answers every body over the size limit with HTTP 413, never a reset connection', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { s: 'x'.repeat(5_000_000) }, _meta: ENVELOPE },
    });
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 12; attempt++) {
      const outcome = await post(server.url, body, modernHeaders('tools/call', 'echo'), 20_000).then(
        (answer) => String(answer.status),
        (error: unknown) => `failed: ${String((error as { cause?: { code?: string } }).cause?.code ?? error)}`,
      );
      outcomes.push(outcome);
    }
    expect(outcomes).toEqual(Array.from({ length: 12 }, () => '413'));
  });

  // core/src/http-sessions.ts (LegacySessions.owns) sends every POSTed
  // `initialize` to a 2025-11-25 session transport, which refuses one that does
  // not validate as a 2025 initialize with 400 / -32000 "Server not initialized"
  // and id null. A 2026-07-28 client gets that instead of the 404 / -32601 its
  // version prescribes for a removed method.
  it('answers a 2026-07-28 `initialize` with 404 and -32601, under the request id', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 41, method: 'initialize', params: { _meta: ENVELOPE } });
    const answer = await post(server.url, body, modernHeaders('initialize', undefined), 10_000);
    const response = answer.messages.find(isResponse);
    expect(answer.status).toBe(404);
    expect(response?.error?.code).toBe(-32601);
    expect(response?.id).toBe(41);
  });

  it('answers a malformed 2025-11-25 `initialize` with an error carrying the request id', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 42, method: 'initialize', params: {} });
    const answer = await post(server.url, body, {}, 10_000);
    const response = answer.messages.find(isResponse);
    expect(response?.error).toBeDefined();
    expect(response?.id).toBe(42);
  });
});
