import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createServer } from '@sluice/core';
import type { SluiceServer, Tool } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { UPSTREAM_CLIENT_CAPABILITIES } from '../src/upstream-features.js';
import { EVERYTHING, call, connectClient, startEverything } from '../../core/test/fixtures/upstream-helpers.js';
import '../src/index.js'; // gives every server import()

// Calls whose answers do not depend on time or on the session: the same through Sluice as direct.
const CALLS: [string, Record<string, unknown>][] = [
  ['echo', { message: 'hello through the gateway' }],
  ['get-sum', { a: 19, b: 23 }],
  ['get-structured-content', { location: 'New York' }],
  ['get-tiny-image', {}],
  ['get-annotated-message', { messageType: 'error', includeImage: true }],
  ['get-resource-links', { count: 2 }],
];

const byName = (a: Tool, b: Tool) => a.name.localeCompare(b.name);

async function sameAsDirect(server: SluiceServer, reference: Client, namespace: string): Promise<void> {
  const { client } = await connectClient(server);
  const direct = (await reference.listTools()).tools.sort(byName);
  const through = (await client.listTools()).tools.filter((t) => t.name.startsWith(`${namespace}_`)).sort(byName);
  expect(through.map((t) => ({ ...t, name: t.name.slice(namespace.length + 1) }))).toEqual(direct);
  for (const [name, args] of CALLS) {
    expect(await call(client, `${namespace}_${name}`, args), name).toEqual(await call(reference, name, args));
  }
  await client.close();
}

/**
 * A direct client that declares what Sluice declares to its upstreams
 * (sampling, elicitation, roots: relayed to its own clients), so that the
 * server offers both the same tools.
 */
function directClient(): Client {
  return new Client({ name: 'direct', version: '1.0.0' }, { capabilities: UPSTREAM_CLIENT_CAPABILITIES });
}

function gateway(): SluiceServer {
  return createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
}

describe('importing the everything server, which no one here wrote', () => {
  it('over stdio: lists and answers as the server does directly, and forwards its progress', async () => {
    const reference = directClient();
    await reference.connect(
      new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }),
    );
    const server = gateway();
    const result = await server.import({
      name: 'everything',
      namespace: 'ev',
      connection: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
    expect(result.imported).toEqual(
      expect.arrayContaining(['ev_echo', 'ev_get-sum', 'ev_trigger-long-running-operation']),
    );
    await sameAsDirect(server, reference, 'ev');

    const { client } = await connectClient(server);
    const progress: number[] = [];
    const done = await client.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(textOf(done as never)).toMatch(/Long running operation completed/);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toBe(1);
    await client.close();
    await reference.close();
    await server.close();
  });

  describe('over HTTP', () => {
    let http: Awaited<ReturnType<typeof startEverything>>;
    beforeAll(async () => {
      http = await startEverything('streamableHttp');
    });
    afterAll(async () => {
      await http.stop();
    });

    it.each(['node', 'sdk'] as const)(
      'over Streamable HTTP (%s transport): lists and answers as the server does directly',
      async (transport) => {
        const reference = directClient();
        await reference.connect(new StreamableHTTPClientTransport(new URL(http.url)));
        const server = gateway();
        const result = await server.import({
          name: 'everything',
          namespace: 'ev',
          connection: { type: 'http', url: http.url, headers: { 'x-api-key': 'k-123456' }, transport },
        });
        expect(result.skipped.filter((s) => s.by === 'core' && /unreachable|could not/.test(s.reason))).toEqual([]);
        await sameAsDirect(server, reference, 'ev');
        expect(server.upstreams()).toMatchObject([
          { name: 'everything', transport: 'http', health: 'healthy', target: http.url },
        ]);
        await reference.close();
        await server.close();
      },
    );
  });

  it('over legacy HTTP+SSE: lists and answers as the server does directly', async () => {
    const sse = await startEverything('sse');
    const reference = directClient();
    await reference.connect(new SSEClientTransport(new URL(sse.url)));
    const server = gateway();
    await server.import({ name: 'everything', namespace: 'ev', connection: { type: 'sse', url: sse.url } });
    await sameAsDirect(server, reference, 'ev');
    await reference.close();
    await server.close();
    await sse.stop();
  });
});
