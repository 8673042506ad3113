import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { EVERYTHING, eventually, startEverything } from '../../core/test/fixtures/upstream-helpers.js';
import '../src/index.js'; // gives every server import()

// The everything server, which no one here wrote, behind the gateway and directly, side by side:
// resources (text and binary), templates, prompts, completion, subscriptions, logging, and the
// requests it makes of its client during a call.

const NS = 'ev';
const SAMPLED = {
  role: 'assistant',
  content: { type: 'text', text: 'a sampled answer' },
  model: 'test-model',
} as const;
const ELICITED = { action: 'accept', content: { color: 'blue' } } as const;
const ROOTS = { roots: [{ uri: 'file:///tmp/sluice-root', name: 'root' }] };

/** A client that can answer sampling, elicitation and roots, and records what it hears. */
function newClient(): {
  client: Client;
  logs: unknown[];
  updated: string[];
  asked: string[];
} {
  const client = new Client(
    { name: 'test-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
  const logs: unknown[] = [];
  const updated: string[] = [];
  const asked: string[] = [];
  client.setRequestHandler('sampling/createMessage', () => {
    asked.push('sampling');
    return { ...SAMPLED, content: { ...SAMPLED.content } };
  });
  client.setRequestHandler('elicitation/create', () => {
    asked.push('elicitation');
    return { action: ELICITED.action, content: { ...ELICITED.content } };
  });
  client.setRequestHandler('roots/list', () => {
    asked.push('roots');
    return { roots: ROOTS.roots.map((r) => ({ ...r })) };
  });
  client.setNotificationHandler('notifications/message', (n) => void logs.push(n.params));
  client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));
  return { client, logs, updated, asked };
}

async function through(server: SluiceServer): Promise<ReturnType<typeof newClient>> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const made = newClient();
  await made.client.connect(clientSide);
  return made;
}

async function direct(transport: Transport): Promise<ReturnType<typeof newClient>> {
  const made = newClient();
  await made.client.connect(transport);
  return made;
}

const unprefixed = <T extends { name: string }>(items: T[]): T[] =>
  items.map((item) => ({ ...item, name: item.name.slice(NS.length + 1) }));

const CLOCK = /\d{1,2}:\d{2}:\d{2}(\s?[AP]M)?/g;

/** A read result with its contents decoded and any time of day blanked. */
function untimed(result: { contents: ({ text: string } | { blob: string })[] }): unknown {
  return result.contents.map((content) =>
    'text' in content
      ? { ...content, text: content.text.replace(CLOCK, 'TIME') }
      : { ...content, blob: Buffer.from(content.blob, 'base64').toString('utf8').replace(CLOCK, 'TIME') },
  );
}

/** Everything the two clients should see alike. */
async function sameAsDirect(gw: Client, ref: Client): Promise<void> {
  const caps = gw.getServerCapabilities();
  expect(caps?.resources).toEqual({ listChanged: true, subscribe: true });
  expect(caps?.prompts).toEqual({ listChanged: true });
  expect(caps?.completions).toEqual({});
  expect(caps?.logging).toEqual({});

  const resources = (await ref.listResources()).resources;
  expect(resources.length).toBeGreaterThan(0);
  expect((await gw.listResources()).resources).toEqual(resources);
  expect((await gw.listResourceTemplates()).resourceTemplates).toEqual(
    (await ref.listResourceTemplates()).resourceTemplates,
  );
  for (const { uri } of resources) expect(await gw.readResource({ uri }), uri).toEqual(await ref.readResource({ uri }));
  // Read through the templates: one text, one binary.
  // These say when they were made (to the second): that part may differ between two reads, the rest may not.
  for (const uri of ['demo://resource/dynamic/text/3', 'demo://resource/dynamic/blob/4']) {
    const viaGateway = await gw.readResource({ uri });
    expect(untimed(viaGateway), uri).toEqual(untimed(await ref.readResource({ uri })));
  }
  const blob = await gw.readResource({ uri: 'demo://resource/dynamic/blob/4' });
  expect(blob.contents[0]).toHaveProperty('blob');

  const prompts = (await ref.listPrompts()).prompts;
  expect(unprefixed((await gw.listPrompts()).prompts)).toEqual(prompts);
  const gets: [string, Record<string, string>][] = [
    ['simple-prompt', {}],
    ['args-prompt', { city: 'Lyon', state: 'Rhône' }],
    ['resource-prompt', { resourceType: 'Text', resourceId: '2' }],
  ];
  // resource-prompt embeds a resource that says when it was made, as the reads above.
  const clockless = (result: unknown): unknown => JSON.parse(JSON.stringify(result).replace(CLOCK, 'TIME'));
  for (const [name, args] of gets) {
    expect(clockless(await gw.getPrompt({ name: `${NS}_${name}`, arguments: args })), name).toEqual(
      clockless(await ref.getPrompt({ name, arguments: args })),
    );
  }
  expect(
    await gw.complete({
      ref: { type: 'ref/prompt', name: `${NS}_completable-prompt` },
      argument: { name: 'department', value: 'E' },
    }),
  ).toEqual(
    await ref.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'E' },
    }),
  );
  const templateRef = { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' } as const;
  expect(await gw.complete({ ref: templateRef, argument: { name: 'resourceId', value: '1' } })).toEqual(
    await ref.complete({ ref: templateRef, argument: { name: 'resourceId', value: '1' } }),
  );
}

/** The upstream's sampling, elicitation and roots requests, made during a call, through the gateway and directly. */
async function sameRelayAsDirect(gw: ReturnType<typeof newClient>, ref: ReturnType<typeof newClient>): Promise<void> {
  const cases: [string, Record<string, unknown>, string][] = [
    ['trigger-sampling-request', { prompt: 'Say something', maxTokens: 20 }, 'sampling'],
    ['trigger-elicitation-request', {}, 'elicitation'],
    ['get-roots-list', {}, 'roots'],
  ];
  for (const [tool, args, asked] of cases) {
    const viaGateway = await gw.client.callTool({ name: `${NS}_${tool}`, arguments: args });
    const directly = await ref.client.callTool({ name: tool, arguments: args });
    expect(viaGateway, tool).toEqual(directly);
    expect(gw.asked, tool).toContain(asked);
  }
  const sampled = await gw.client.callTool({ name: `${NS}_trigger-sampling-request`, arguments: { prompt: 'x' } });
  expect(JSON.stringify(sampled.content)).toContain('a sampled answer');
}

function gateway(): SluiceServer {
  return createServer({ name: 'gateway', version: '1.0.0', logger: captureLogger().logger });
}

describe('the everything server behind the gateway behaves as it does directly', () => {
  it('over stdio: resources, templates, prompts, completion, and the requests it makes during a call', async () => {
    const server = gateway();
    await server.import({
      name: 'everything',
      namespace: NS,
      connection: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
    const gw = await through(server);
    const ref = await direct(
      new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }),
    );
    await sameAsDirect(gw.client, ref.client);
    await sameRelayAsDirect(gw, ref);
    await gw.client.close();
    await ref.client.close();
    await server.close();
  });

  describe('over Streamable HTTP', () => {
    let http: Awaited<ReturnType<typeof startEverything>>;
    let server: SluiceServer;
    beforeAll(async () => {
      http = await startEverything('streamableHttp');
      server = gateway();
      await server.import({ name: 'everything', namespace: NS, connection: { type: 'http', url: http.url } });
    });
    afterAll(async () => {
      await server.close();
      await http.stop();
    });

    it('lists, reads, prompts and completes alike', async () => {
      const gw = await through(server);
      const ref = await direct(new StreamableHTTPClientTransport(new URL(http.url)));
      await sameAsDirect(gw.client, ref.client);
      await gw.client.close();
      await ref.client.close();
    });

    it("relays the upstream's sampling, elicitation and roots requests to the caller, and their answers back", async () => {
      const gw = await through(server);
      const ref = await direct(new StreamableHTTPClientTransport(new URL(http.url)));
      await sameRelayAsDirect(gw, ref);
      await gw.client.close();
      await ref.client.close();
    });

    it('tells a subscribed client, and only it, that a resource changed', async () => {
      const subscriber = await through(server);
      const bystander = await through(server);
      const uri = 'demo://resource/dynamic/text/1';
      await subscriber.client.subscribeResource({ uri });
      await subscriber.client.callTool({ name: `${NS}_toggle-subscriber-updates`, arguments: {} });
      await eventually(() => subscriber.updated.includes(uri), 'the update reaches the subscriber', 15_000);
      await subscriber.client.callTool({ name: `${NS}_toggle-subscriber-updates`, arguments: {} });
      await subscriber.client.unsubscribeResource({ uri });
      expect(bystander.updated).toEqual([]);
      await subscriber.client.close();
      await bystander.client.close();
    });

    it("relays the upstream's log messages at the level the client set", async () => {
      const gw = await through(server);
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- 2025-11-25 logging is what this test relays
      await gw.client.setLoggingLevel('debug');
      await gw.client.callTool({ name: `${NS}_toggle-simulated-logging`, arguments: {} });
      await eventually(() => gw.logs.length > 0, 'a log message of the upstream arrives', 15_000);
      await gw.client.callTool({ name: `${NS}_toggle-simulated-logging`, arguments: {} });
      expect(gw.logs[0]).toHaveProperty('level');
      await gw.client.close();
    });
  });
});
