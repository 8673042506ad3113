import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { MEMORY, eventually } from '../../core/test/fixtures/upstream-helpers.js';
import '../src/index.js'; // gives every server import()

// A second server no one here wrote, behind the gateway and directly, side by side: the memory server offers its
// knowledge graph as one subscribable resource and says when a tool changed it. Each side runs its own copy on its
// own file, and both get the same tool calls, so what they read must match.

const NS = 'mem';
const GRAPH = 'memory://knowledge-graph';
const ENTITIES = [
  { name: 'Lyon', entityType: 'city', observations: ['on the Rhône'] },
  { name: 'Rhône', entityType: 'river', observations: ['flows south'] },
];
const RELATIONS = [{ from: 'Lyon', to: 'Rhône', relationType: 'lies on' }];

interface Watched {
  client: Client;
  updated: string[];
}

function watched(): Watched {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const updated: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));
  return { client, updated };
}

async function through(server: SluiceServer): Promise<Watched> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const made = watched();
  await made.client.connect(clientSide);
  return made;
}

function memoryProcess(file: string): { command: string; args: string[]; env: Record<string, string> } {
  return { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: file } };
}

/** A tool call that changes the graph, made on both sides. */
async function onBoth(gw: Client, ref: Client, tool: string, args: Record<string, unknown>): Promise<void> {
  const viaGateway = await gw.callTool({ name: `${NS}_${tool}`, arguments: args });
  expect(viaGateway, tool).toEqual(await ref.callTool({ name: tool, arguments: args }));
}

describe('the memory server behind the gateway behaves as it does directly', () => {
  let folder: string;
  let server: SluiceServer;
  let ref: Watched;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'sluice-memory-'));
    server = createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
    await server.import({
      name: 'memory',
      namespace: NS,
      connection: { type: 'stdio', ...memoryProcess(join(folder, 'gateway.jsonl')) },
    });
    ref = watched();
    const direct = memoryProcess(join(folder, 'direct.jsonl'));
    await ref.client.connect(new StdioClientTransport({ ...direct, stderr: 'ignore' }));
  });

  afterAll(async () => {
    await ref.client.close();
    await server.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('advertises, lists and reads its knowledge graph resource alike, before and after tools change it', async () => {
    const gw = await through(server);
    expect(gw.client.getServerCapabilities()?.resources).toEqual({ listChanged: true, subscribe: true });
    expect(ref.client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });

    const listed = (await ref.client.listResources()).resources;
    expect(listed.map((r) => r.uri)).toEqual([GRAPH]);
    expect((await gw.client.listResources()).resources).toEqual(listed);
    expect((await gw.client.listResourceTemplates()).resourceTemplates).toEqual(
      (await ref.client.listResourceTemplates()).resourceTemplates,
    );
    expect(await gw.client.readResource({ uri: GRAPH })).toEqual(await ref.client.readResource({ uri: GRAPH }));

    await onBoth(gw.client, ref.client, 'create_entities', { entities: ENTITIES });
    await onBoth(gw.client, ref.client, 'create_relations', { relations: RELATIONS });
    const read = await gw.client.readResource({ uri: GRAPH });
    expect(read).toEqual(await ref.client.readResource({ uri: GRAPH }));
    const [content] = read.contents;
    expect(content).toMatchObject({ uri: GRAPH, mimeType: 'application/json' });
    const graph = JSON.parse((content as { text: string }).text) as { entities: unknown[]; relations: unknown[] };
    expect(graph.entities).toHaveLength(2);
    expect(graph.relations).toEqual(RELATIONS);
    await gw.client.close();
  });

  it('answers a read of a URI the server does not have with the code and text the server gives directly', async () => {
    const gw = await through(server);
    const uri = 'memory://no-such-graph';
    const failure = (read: Promise<unknown>) =>
      read.then(
        () => expect.unreachable(`${uri} was read`),
        (error: unknown) => error as { code: number; message: string },
      );
    const direct = await failure(ref.client.readResource({ uri }));
    const viaGateway = await failure(gw.client.readResource({ uri }));
    expect(direct.message).toContain(uri);
    // The server's SDK writes "MCP error <code>: " into its messages; the gateway passes the text on without it.
    expect(viaGateway).toMatchObject({ code: direct.code, message: direct.message.replace(/^MCP error -?\d+: /, '') });
    await gw.client.close();
  });

  it('tells the subscribed client, and only it, that a tool changed the graph, until it unsubscribes', async () => {
    const subscriber = await through(server);
    const bystander = await through(server);
    await subscriber.client.subscribeResource({ uri: GRAPH });
    await ref.client.subscribeResource({ uri: GRAPH });

    await onBoth(subscriber.client, ref.client, 'add_observations', {
      observations: [{ entityName: 'Lyon', contents: ['has two rivers'] }],
    });
    await eventually(() => ref.updated.length === 1, 'the direct client hears of the change');
    await eventually(() => subscriber.updated.length === 1, 'the subscriber hears of the change through the gateway');
    expect(subscriber.updated).toEqual(ref.updated);

    await subscriber.client.unsubscribeResource({ uri: GRAPH });
    await ref.client.unsubscribeResource({ uri: GRAPH });
    await onBoth(bystander.client, ref.client, 'delete_observations', {
      deletions: [{ entityName: 'Lyon', observations: ['has two rivers'] }],
    });
    // Both sides read the graph after the change: an update sent for it would have arrived before either answer.
    expect(await subscriber.client.readResource({ uri: GRAPH })).toEqual(await ref.client.readResource({ uri: GRAPH }));
    expect(ref.updated).toEqual([GRAPH]);
    expect(subscriber.updated).toEqual([GRAPH]);
    expect(bystander.updated).toEqual([]);
    await subscriber.client.close();
    await bystander.client.close();
  });
});
