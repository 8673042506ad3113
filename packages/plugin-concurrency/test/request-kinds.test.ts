// The concurrency guard on requests that are not tool calls: prompt gets and completions share the slots,
// queue and rate of their kind and upstream, and are refused with the same codes.
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { concurrency } from '../src/index.js';
import type { ConcurrencyOptions } from '../src/index.js';
import '@sluice/upstream';

/** An upstream whose prompt gets and completions wait until `open()`; `waiting()` counts them. */
function holdingUpstream() {
  let releases: (() => void)[] = [];
  const hold = () => new Promise<void>((resolve) => releases.push(resolve));
  const mcp = new McpServer({ name: 'slow', version: '1.0.0' });
  mcp.registerPrompt('greet', { argsSchema: z.object({ who: z.string() }) }, async ({ who }) => {
    await hold();
    return { messages: [{ role: 'user', content: { type: 'text', text: `hello ${who}` } }] };
  });
  mcp.registerPrompt('wave', {}, async () => {
    await hold();
    return { messages: [{ role: 'user', content: { type: 'text', text: 'wave' } }] };
  });
  mcp.registerResource(
    'files',
    new ResourceTemplate('file:///{+path}', {
      list: undefined,
      complete: {
        path: async () => {
          await hold();
          return ['a'];
        },
      },
    }),
    {},
    (uri) => ({ contents: [{ uri: uri.href, text: 'x' }] }),
  );
  return {
    mcp,
    waiting: () => releases.length,
    open: () => {
      const all = releases;
      releases = [];
      for (const release of all) release();
    },
  };
}

let server: SluiceServer | undefined;
afterEach(() => server?.close());

async function gateway(options: ConcurrencyOptions) {
  const upstream = holdingUpstream();
  server = createServer({
    name: 'gw',
    version: '1.0.0',
    logger: captureLogger().logger,
    plugins: [concurrency(options)],
  });
  await server.import({ name: 'slow', connection: { type: 'in-process', server: upstream.mcp } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'kinds', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, upstream };
}

const outcome = (request: Promise<unknown>) =>
  request.then(
    () => 'served',
    (error: unknown) => String(error),
  );

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('concurrency on prompt gets and completions', () => {
  it('sheds the 4 prompt gets past 1 running and 1 waiting with SERVER_BUSY', async () => {
    const { client, upstream } = await gateway({ default: { maxActive: 1, maxQueue: 1 } });
    const gets = Array.from({ length: 6 }, () => outcome(client.getPrompt({ name: 'greet', arguments: { who: 'x' } })));
    let settled = 0;
    const counted = gets.map((g) => g.then((o) => (settled++, o)));
    await until(() => settled === 4);
    expect(upstream.waiting()).toBe(1);
    upstream.open();
    await until(() => upstream.waiting() === 1 || settled === 6);
    upstream.open();
    const outcomes = await Promise.all(counted);
    expect(outcomes.filter((o) => o.includes('SERVER_BUSY'))).toHaveLength(4);
    expect(outcomes.filter((o) => o === 'served')).toHaveLength(2);
  });

  it('limits completions by their own kind setting, and leaves a kind set to false unguarded', async () => {
    const { client, upstream } = await gateway({
      requests: { 'completion/complete': { maxActive: 1 }, 'prompts/get': false },
      default: { maxActive: 1 },
    });
    const ref = { type: 'ref/resource' as const, uri: 'file:///{+path}' };
    const completions = Array.from({ length: 3 }, () =>
      outcome(client.complete({ ref, argument: { name: 'path', value: '' } })),
    );
    const gets = Array.from({ length: 3 }, () => outcome(client.getPrompt({ name: 'greet', arguments: { who: 'x' } })));
    // One completion and all three prompt gets reach the upstream; the other two completions are shed.
    await until(() => upstream.waiting() === 4);
    upstream.open();
    const done = await Promise.all([...completions, ...gets]);
    expect(done.filter((o) => o.includes('SERVER_BUSY'))).toHaveLength(2);
    expect(done.filter((o) => o === 'served')).toHaveLength(4);
  });

  it('refuses reads past the rate with RATE_LIMITED', async () => {
    const { client } = await gateway({
      requests: { 'resources/read': { maxActive: 10, rate: { calls: 2, perMs: 3_600_000 } } },
    });
    const reads = [];
    for (let i = 0; i < 3; i++) reads.push(await outcome(client.readResource({ uri: `file:///r${i}` })));
    expect(reads.slice(0, 2)).toEqual(['served', 'served']);
    expect(reads[2]).toContain('RATE_LIMITED');
  });
});

describe('concurrency settings per target: resource URI globs and prompt selectors', () => {
  it('gives each URI glob its own limit, matched on the canonical URI, first glob first', async () => {
    const { client } = await gateway({
      resources: {
        'file:///hot/free/*': false,
        'file:///hot/*': { maxActive: 10, rate: { calls: 1, perMs: 3_600_000 } },
      },
      requests: { 'resources/read': { maxActive: 10, rate: { calls: 100, perMs: 3_600_000 } } },
    });
    const read = (uri: string) => outcome(client.readResource({ uri }));
    expect(await read('file:///hot/a')).toBe('served');
    // The glob's one set of slots and rate, whichever URI under it and however it is spelt.
    expect(await read('file:///hot/b')).toContain('RATE_LIMITED');
    expect(await read('FILE://localhost/cold/../hot/c')).toContain('RATE_LIMITED');
    // Outside the glob, or under an earlier `false`: the kind's own setting.
    for (let i = 0; i < 3; i++) expect(await read(`file:///cold/${i}`)).toBe('served');
    for (let i = 0; i < 3; i++) expect(await read(`file:///hot/free/${i}`)).toBe('served');
  });

  it('gives a prompt selected by name its own slots; other prompts keep the kind setting', async () => {
    const { client, upstream } = await gateway({ prompts: { greet: { maxActive: 1 } } });
    const greets = Array.from({ length: 3 }, () =>
      outcome(client.getPrompt({ name: 'greet', arguments: { who: 'x' } })),
    );
    const waves = Array.from({ length: 3 }, () => outcome(client.getPrompt({ name: 'wave' })));
    // One greet and every wave reach the upstream; the other two greets are shed.
    await until(() => upstream.waiting() === 4);
    upstream.open();
    const greeted = await Promise.all(greets);
    expect(greeted.filter((o) => o.includes('SERVER_BUSY'))).toHaveLength(2);
    expect(await Promise.all(waves)).toEqual(['served', 'served', 'served']);
  });

  it('accepts URI globs and prompt selectors, and rejects an empty glob or a bad selector', () => {
    expect(() =>
      concurrency({ resources: { 'file:///x/*': { maxActive: 1 } }, prompts: { 'up/*': false } }),
    ).not.toThrow();
    expect(() => concurrency({ resources: { '': { maxActive: 1 } } })).toThrow(/resources/);
    expect(() => concurrency({ prompts: { 'a/b/c': { maxActive: 1 } } })).toThrow(/prompts\.a\/b\/c/);
  });
});
