// The loop guard on requests other than tool calls: resource reads and subscriptions, prompt gets and
// completions, through a gateway whose in-process upstream records the `_meta` each request brought.
import { Server } from '@modelcontextprotocol/server';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { MetaKey, createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import type { CapturedLogger } from '@sluice/testing';
import { LoopGuardErrorCode, PLAIN_CALL_STACK_KEY, loopGuard } from '@sluice/plugin-loop-guard';
import type { LoopGuardOptions } from '@sluice/plugin-loop-guard';
import { entryOf } from '../src/feature-guard.js';
import '@sluice/upstream';

interface Received {
  readonly method: string;
  readonly stack: unknown;
  readonly plain: unknown;
  readonly origin: unknown;
}

/** An upstream with resources, prompts, completions and subscriptions; each request's call stack is recorded. */
function upstream() {
  const received: Received[] = [];
  const record = (method: string, params: { _meta?: Record<string, unknown> } | undefined) =>
    void received.push({
      method,
      stack: params?._meta?.[MetaKey.CALL_STACK],
      plain: params?._meta?.[PLAIN_CALL_STACK_KEY],
      origin: params?._meta?.[MetaKey.ORIGIN],
    });
  const server = new Server(
    { name: 'files', version: '1.0.0' },
    { capabilities: { resources: { subscribe: true }, prompts: {}, completions: {} } },
  );
  server.setRequestHandler('resources/list', () => ({ resources: [{ uri: 'file:///readme', name: 'readme' }] }));
  server.setRequestHandler('resources/templates/list', () => ({ resourceTemplates: [] }));
  server.setRequestHandler('prompts/list', () => ({ prompts: [{ name: 'greet' }] }));
  server.setRequestHandler('resources/read', (request) => {
    record('resources/read', request.params);
    return { contents: [{ uri: request.params.uri, text: 'hi' }] };
  });
  server.setRequestHandler('prompts/get', (request) => {
    record('prompts/get', request.params);
    return { messages: [] };
  });
  server.setRequestHandler('completion/complete', (request) => {
    record('completion/complete', request.params);
    return { completion: { values: [] } };
  });
  for (const method of ['resources/subscribe', 'resources/unsubscribe'] as const)
    server.setRequestHandler(method, (request) => {
      record(method, request.params);
      return {};
    });
  return { server, received };
}

let gateway: SluiceServer | undefined;
afterEach(() => gateway?.close());

async function guarded(
  guard: LoopGuardOptions,
): Promise<{ client: Client; received: Received[]; logs: CapturedLogger }> {
  const files = upstream();
  const logs = captureLogger();
  gateway = createServer({ name: 'gw', version: '1.0.0', logger: logs.logger, plugins: [loopGuard(guard)] });
  await gateway.import({ name: 'fs', connection: { type: 'in-process', server: files.server } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(serverSide);
  const client = new Client({ name: 'loop-guard', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, received: files.received, logs };
}

const stackMeta = (stack: unknown) => ({ [MetaKey.CALL_STACK]: stack });

/** The JSON-RPC error a request ended with. */
async function errorOf(request: Promise<unknown>): Promise<{ code: number; message: string; data: unknown }> {
  return request.then(
    () => {
      throw new Error('the request was answered, not refused');
    },
    (error: unknown) => error as { code: number; message: string; data: unknown },
  );
}

describe('the stack a feature request passes on', () => {
  it('starts with the request, named as this service relays it, under both keys, with the origin', async () => {
    const { client, received } = await guarded({ originService: 'svcA' });
    await client.readResource({ uri: 'file:///readme' });
    expect(received).toEqual([
      {
        method: 'resources/read',
        stack: ['svcA/resources/read file:///readme'],
        plain: ['svcA/resources/read file:///readme'],
        origin: 'svcA',
      },
    ]);
  });

  it('extends the stack the request brought, tool entries and all, read under either key', async () => {
    const { client, received } = await guarded({ originService: 'svcA' });
    await client.getPrompt({ name: 'greet', _meta: stackMeta(['svcX/svcX.run', 'svcY/resources/read x://y']) });
    await client.complete({
      ref: { type: 'ref/prompt', name: 'greet' },
      argument: { name: 'who', value: '' },
      _meta: { [PLAIN_CALL_STACK_KEY]: ['plain/only'] },
    });
    expect(received.map(({ method, stack, plain }) => ({ method, stack, plain }))).toEqual([
      {
        method: 'prompts/get',
        stack: ['svcX/svcX.run', 'svcY/resources/read x://y', 'svcA/prompts/get greet'],
        plain: ['svcX/svcX.run', 'svcY/resources/read x://y', 'svcA/prompts/get greet'],
      },
      {
        method: 'completion/complete',
        stack: ['plain/only', 'svcA/completion/complete greet'],
        plain: ['plain/only', 'svcA/completion/complete greet'],
      },
    ]);
  });

  it('covers subscriptions too', async () => {
    const { client, received } = await guarded({ originService: 'svcA' });
    await client.subscribeResource({ uri: 'file:///readme' });
    await client.unsubscribeResource({ uri: 'file:///readme' });
    expect(received.map(({ method, stack }) => ({ method, stack }))).toEqual([
      { method: 'resources/subscribe', stack: ['svcA/resources/subscribe file:///readme'] },
      { method: 'resources/unsubscribe', stack: ['svcA/resources/unsubscribe file:///readme'] },
    ]);
  });

  it('names a target too long for an entry by its SHA-256, so that its repeat is still seen', async () => {
    const { client, received } = await guarded({ originService: 'svcA' });
    const long = `file:///${'x'.repeat(400)}`;
    const entry = entryOf('svcA/', 'resources/read', long);
    expect(entry).toMatch(/^svcA\/resources\/read sha256:[0-9a-f]{64}$/);
    // Not listed, but the upstream is the only one with resources: the read goes to it.
    await client.readResource({ uri: long });
    expect(received[0]?.stack).toEqual([entry]);
    const error = await errorOf(client.readResource({ uri: long, _meta: stackMeta([entry]) }));
    expect(error.data).toMatchObject({ code: LoopGuardErrorCode.LOOP_DETECTED, entry });
  });
});

describe('refusals of feature requests', () => {
  it('refuses a request whose own entry is in the stack, as a JSON-RPC error, before it leaves', async () => {
    const { client, received, logs } = await guarded({ originService: 'svcA' });
    const entry = 'svcA/resources/read file:///readme';
    const error = await errorOf(
      client.readResource({ uri: 'file:///readme', _meta: stackMeta([entry, 'svcB/resources/read file:///readme']) }),
    );
    expect(error.code).toBe(-32600);
    expect(error.message).toContain(`LOOP_DETECTED: Loop detected: "${entry}" is already in the call stack`);
    expect(error.data).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      plugin: 'loop-guard',
      entry,
      cycle: [entry, 'svcB/resources/read file:///readme', entry],
      side: 'provider',
    });
    expect(received).toEqual([]);
    expect(logs.events('loop_guard.loop_detected')).toEqual([
      expect.objectContaining({ entry, side: 'provider', kind: 'resources/read' }),
    ]);
  });

  it('refuses each kind the same way', async () => {
    const { client, received } = await guarded({ originService: 'svcA' });
    const looped = (entry: string) => stackMeta([entry]);
    const requests = [
      client.getPrompt({ name: 'greet', _meta: looped('svcA/prompts/get greet') }),
      client.complete({
        ref: { type: 'ref/prompt', name: 'greet' },
        argument: { name: 'who', value: '' },
        _meta: looped('svcA/completion/complete greet'),
      }),
      client.subscribeResource({ uri: 'file:///readme', _meta: looped('svcA/resources/subscribe file:///readme') }),
    ];
    for (const request of requests)
      expect((await errorOf(request)).data).toMatchObject({ code: LoopGuardErrorCode.LOOP_DETECTED });
    expect(received).toEqual([]);
  });

  it('does not mistake the same request for another item, or another request for the same item, for a loop', async () => {
    const { client, received } = await guarded({ originService: 'svcA' });
    await client.readResource({ uri: 'file:///readme', _meta: stackMeta(['svcA/resources/read file:///other']) });
    await client.readResource({ uri: 'file:///readme', _meta: stackMeta(['svcA/resources/subscribe file:///readme']) });
    await client.readResource({ uri: 'file:///readme', _meta: stackMeta(['svcB/resources/read file:///readme']) });
    expect(received).toHaveLength(3);
  });

  it('bounds the chain with maxDepth: CALL_STACK_TOO_DEEP once the stack holds maxDepth entries', async () => {
    const { client, received } = await guarded({ originService: 'svcA', maxDepth: 3 });
    await client.readResource({ uri: 'file:///readme', _meta: stackMeta(['s1/x', 's2/y']) });
    const error = await errorOf(
      client.readResource({ uri: 'file:///readme', _meta: stackMeta(['s1/x', 's2/y', 's3/z']) }),
    );
    expect(error.message).toContain('CALL_STACK_TOO_DEEP: Call chain too deep: 3 requests are already in progress');
    expect(error.data).toMatchObject({ code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP, depth: 3, maxDepth: 3 });
    expect(received).toHaveLength(1);
  });

  it('without originService: entries name no service, a repeat is no loop, and maxDepth still bounds the chain', async () => {
    const { client, received } = await guarded({ maxDepth: 3 });
    const entry = 'resources/read file:///readme';
    await client.readResource({ uri: 'file:///readme', _meta: stackMeta([entry, entry]) });
    expect(received).toEqual([
      { method: 'resources/read', stack: [entry, entry, entry], plain: [entry, entry, entry], origin: undefined },
    ]);
    const error = await errorOf(
      client.readResource({ uri: 'file:///readme', _meta: stackMeta([entry, entry, entry]) }),
    );
    expect(error.data).toMatchObject({ code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP });
    expect(received).toHaveLength(1);
  });

  it('answers a malformed stack with -32602 naming the key, never its content', async () => {
    const { client, received } = await guarded({ originService: 'svcA' });
    const error = await errorOf(client.readResource({ uri: 'file:///readme', _meta: stackMeta('secret-ish text') }));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(`_meta["${MetaKey.CALL_STACK}"] must be an array`);
    expect(error.message).not.toContain('secret-ish');
    expect(received).toEqual([]);
  });
});

describe('audit mode on feature requests', () => {
  it('logs what it would refuse and lets the request through, passing the extended stack on', async () => {
    const { client, received, logs } = await guarded({ originService: 'svcA', mode: 'audit' });
    const entry = 'svcA/resources/read file:///readme';
    await client.readResource({ uri: 'file:///readme', _meta: stackMeta([entry]) });
    expect(received.map((r) => r.stack)).toEqual([[entry, entry]]);
    expect(logs.events('loop_guard.loop_detected')).toHaveLength(1);
    expect(logs.events('audit.refusal')).toEqual([
      expect.objectContaining({ plugin: 'loop-guard', kind: 'resources/read', code: LoopGuardErrorCode.LOOP_DETECTED }),
    ]);
  });

  it('reads a malformed stack as empty, with a warning', async () => {
    const { client, received, logs } = await guarded({ originService: 'svcA', mode: 'audit' });
    await client.readResource({ uri: 'file:///readme', _meta: stackMeta(42) });
    expect(received.map((r) => r.stack)).toEqual([['svcA/resources/read file:///readme']]);
    expect(logs.events('loop_guard.malformed_stack')).toHaveLength(1);
  });
});

describe("mode 'off'", () => {
  it('passes feature requests on untouched', async () => {
    const { client, received } = await guarded({ originService: 'svcA', mode: 'off' });
    await client.readResource({ uri: 'file:///readme', _meta: stackMeta(['svcA/resources/read file:///readme']) });
    expect(received).toEqual([{ method: 'resources/read', stack: undefined, plain: undefined, origin: undefined }]);
  });
});
