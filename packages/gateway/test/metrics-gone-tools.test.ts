// A hostile upstream renames its tools over and over while a client calls each new name: the metric series of a
// tool go when the tool goes, so /metrics names only the tools exposed now, however long the churn lasts. Driven
// through a real gateway: an upstream whose tools change on command, local tools removed mid-call, a real client.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { Stage, definePlugin } from '@sluice/core';
import type { CallToolResult } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { createGateway } from '@sluice/gateway';
import type { Gateway } from '@sluice/gateway';
import { call, eventually, httpClient, sample } from './helpers.js';

const CHANGING_UPSTREAM = fileURLToPath(new URL('./fixtures/changing-upstream.mjs', import.meta.url));
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });

/** A promise and the function that settles it. */
function gate(): { readonly opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

// Calls of `slow` wait for `release`; calls of `gated` wait at a request tap (ahead of the metrics) for `admit`.
let release = gate();
let admit = gate();
const atGate: string[] = [];
const waitAtGate = definePlugin({
  name: 'wait-at-gate',
  version: '1.0.0',
  apply: ({ hooks }) => {
    hooks.request.tap(
      { name: 'wait-at-gate', stage: Stage.FIRST, beforeArguments: true, tools: (tool) => tool.name === 'gated' },
      async (ctx) => {
        atGate.push(ctx.kind);
        await admit.opened;
        return undefined;
      },
    );
  },
});

let gateway: Gateway;
let client: Client;
let metricsUrl: URL;
const scrape = async (): Promise<string> => (await fetch(metricsUrl)).text();
/** The distinct `tool` labels of an exposition that match `pattern`. */
const toolLabels = (body: string, pattern: RegExp): string[] =>
  [...new Set([...body.matchAll(/tool="([^"]*)"/g)].map((m) => m[1] ?? ''))].filter((t) => pattern.test(t)).sort();

beforeAll(async () => {
  gateway = createGateway(
    {
      listen: { http: { port: 0 } },
      upstreams: [
        {
          name: 'up',
          namespace: 'up',
          connection: { type: 'stdio', command: process.execPath, args: [CHANGING_UPSTREAM] },
        },
      ],
      plugins: { concurrency: { tools: { slow: { maxActive: 1, maxQueue: 4 } } } },
    },
    { logger: captureLogger().logger, plugins: [waitAtGate] },
  );
  const { http } = await gateway.start();
  metricsUrl = new URL('/metrics', http!.url);
  client = await httpClient(http!.url);
}, 60_000);

afterAll(async () => {
  release.open();
  admit.open();
  await client.close();
  await gateway.close();
});

const listed = async (name: string): Promise<boolean> =>
  (await client.listTools()).tools.some((tool) => tool.name === name);

describe("a tool's metric series go with the tool", () => {
  it('an upstream renaming its tools round after round leaves the series of the live tool only', async () => {
    const rounds = 12;
    for (let round = 0; round < rounds; round++) {
      const name = `t${round}`;
      await call(client, 'up_change', { kind: 'tool', name, action: 'add' });
      await eventually(() => listed(`up_${name}`), `up_${name} is exposed`);
      expect(textOf(await call(client, `up_${name}`))).toBe(name);
      // The last one stays: its series must stay too.
      if (round === rounds - 1) break;
      await call(client, 'up_change', { kind: 'tool', name, action: 'remove' });
      await eventually(async () => !(await listed(`up_${name}`)), `up_${name} is gone`);
    }
    const body = await scrape();
    expect(toolLabels(body, /^up_t\d+$/)).toEqual([`up_t${rounds - 1}`]);
    expect(sample(body, `sluice_calls_total{tool="up_t${rounds - 1}",outcome="ok"}`)).toBe(1);
    expect(sample(body, `sluice_call_duration_seconds_count{tool="up_t${rounds - 1}"}`)).toBe(1);
    // The tool that made the changes is still there, with every call counted.
    expect(sample(body, 'sluice_calls_total{tool="up_change",outcome="ok"}')).toBe(2 * rounds - 1);
  }, 60_000);

  it('a tool removed while calls run and wait: its series go at once, and the calls ending later bring none back', async () => {
    release = gate();
    gateway.server.tool({
      name: 'slow',
      description: 'Waits for the test.',
      handler: async () => (await release.opened, text('done')),
    });
    await eventually(() => listed('slow'), 'slow is exposed');
    const running = [call(client, 'slow'), call(client, 'slow')];
    // One runs, one waits for the concurrency guard's slot.
    await eventually(
      async () => sample(await scrape(), 'sluice_calls_queued{tool="slow"}') === 1,
      'a call of slow waits',
    );
    expect(sample(await scrape(), 'sluice_calls_in_flight{tool="slow"}')).toBe(2);

    expect(gateway.server.removeTool('slow')).toBe(true);
    expect(toolLabels(await scrape(), /^slow$/)).toEqual([]);
    release.open();
    const ended = await Promise.all(running);
    expect(ended.map(textOf)).toEqual(['done', 'done']);
    expect(toolLabels(await scrape(), /^slow$/)).toEqual([]);

    // Exposed again under the same name: its series start afresh, not from what the gone tool's calls left.
    gateway.server.tool({ name: 'slow', description: 'Answers at once.', handler: () => text('again') });
    await eventually(() => listed('slow'), 'slow is exposed again');
    expect(textOf(await call(client, 'slow'))).toBe('again');
    const body = await scrape();
    expect(sample(body, 'sluice_calls_in_flight{tool="slow"}')).toBe(0);
    expect(sample(body, 'sluice_calls_total{tool="slow",outcome="ok"}')).toBe(1);
    expect(body).not.toContain('sluice_calls_queued{tool="slow"}');
  }, 30_000);

  it('a call that reaches the metrics after its tool is gone makes no series for it', async () => {
    admit = gate();
    atGate.length = 0;
    gateway.server.tool({ name: 'gated', description: 'Answers at once.', handler: () => text('gated') });
    await eventually(() => listed('gated'), 'gated is exposed');
    const pending = call(client, 'gated');
    await eventually(() => atGate.length === 1, 'the call of gated waits at the gate');
    // Held ahead of the metrics: the call has not reached them yet.
    expect(toolLabels(await scrape(), /^gated$/)).toEqual([]);
    expect(gateway.server.removeTool('gated')).toBe(true);
    admit.open();
    await pending;
    expect(toolLabels(await scrape(), /^gated$/)).toEqual([]);
  }, 30_000);
});
