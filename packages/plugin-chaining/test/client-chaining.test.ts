import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@sluice/core';
import { MetaKey, createTestKit, errorOf, metaOf, textOf } from '@sluice/testing';
import type { ChainRecord, ChainStep } from '@sluice/plugin-chaining';
import { ChainingErrorCode, callToolWithChaining, withNext } from '@sluice/plugin-chaining';
import { Runs, busyGuard, stepTools, text } from './support.js';
import '@sluice/http';

const stepsOf = (result: CallToolResult) =>
  metaOf<ChainRecord>(result, MetaKey.CHAIN)?.steps.map((s) => `${s.tool}:${s.code ?? s.outcome}`);

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A bare SDK server (no Sluice) whose tools emit the proposal's plain `nextTool` but never run it. */
async function plainServer(runs: Runs, last = 2): Promise<Client> {
  const server = new McpServer({ name: 'plain', version: '1.0.0' });
  for (let k = 0; k <= last; k++) {
    server.registerTool(`step${k}`, { inputSchema: z.object({ n: z.number() }) }, ({ n }) => {
      runs.hit(`step${k}`);
      const result: CallToolResult = text(`step${k}:${n}`);
      return k < last ? { ...result, _meta: { nextTool: { tool: `step${k + 1}`, arguments: { n: n + 1 } } } } : result;
    });
  }
  server.registerTool('loop', { inputSchema: z.object({}) }, () => ({
    ...text('loop'),
    _meta: { nextTool: { tool: 'loop', arguments: {} } },
  }));
  server.registerTool('to_nowhere', {}, () => ({ ...text('to_nowhere'), _meta: { nextTool: { tool: 'nowhere' } } }));
  server.registerTool('bad_args', {}, () => ({
    ...text('bad_args'),
    _meta: { nextTool: { tool: 'step1', arguments: { n: 'x' } } },
  }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'app', version: '1.0.0' });
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

describe('callToolWithChaining against a plain SDK server', () => {
  it('runs the chain the server asks for and returns the last result', async () => {
    const runs = new Runs();
    const client = await plainServer(runs);
    const seen: ChainStep[] = [];
    const result = await callToolWithChaining(client, 'step0', { n: 0 }, { onStep: (step) => seen.push(step) });
    expect(textOf(result)).toBe('step2:2');
    expect(stepsOf(result)).toEqual(['step1:ok', 'step2:ok']);
    expect(seen.map((s) => s.tool)).toEqual(['step1', 'step2']);
    expect(result._meta?.nextTool).toBeUndefined();
    expect([runs.of('step0'), runs.of('step1'), runs.of('step2')]).toEqual([1, 1, 1]);
  });

  it('runs 5 chained calls and refuses the 6th with the chain listed', async () => {
    const five = await callToolWithChaining(await plainServer(new Runs(), 5), 'step0', { n: 0 });
    expect(textOf(five)).toBe('step5:5');
    const runs = new Runs();
    const six = await callToolWithChaining(await plainServer(runs, 6), 'step0', { n: 0 });
    expect(errorOf(six)?.code).toBe(ChainingErrorCode.TOO_DEEP);
    expect(textOf(six)).toContain('step5 (ok) -> step6 (refused: CHAIN_TOO_DEEP)');
    expect(runs.of('step6')).toBe(0);
  });

  it('refuses a circular chain', async () => {
    const result = await callToolWithChaining(await plainServer(new Runs()), 'loop', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.CIRCULAR);
    expect(stepsOf(result)).toEqual([`loop:${ChainingErrorCode.CIRCULAR}`]);
  });

  it("refuses a next tool missing from the server's tools/list", async () => {
    const result = await callToolWithChaining(await plainServer(new Runs()), 'to_nowhere', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.UNKNOWN_TOOL);
    expect(textOf(result)).toContain('to_nowhere');
  });

  it('checks arguments against the listed input schema before calling', async () => {
    const runs = new Runs();
    const result = await callToolWithChaining(await plainServer(runs), 'bad_args', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.INVALID_ARGUMENTS);
    expect(textOf(result)).toMatch(/arguments for "step1" do not match its input schema: .*n must be number/);
    expect(runs.of('step1')).toBe(0);
  });

  it('honours maxDepth and the tools patterns', async () => {
    const client = await plainServer(new Runs(), 3);
    expect(errorOf(await callToolWithChaining(client, 'step0', { n: 0 }, { maxDepth: 1 }))?.code).toBe(
      ChainingErrorCode.TOO_DEEP,
    );
    const notFollowed = await callToolWithChaining(client, 'step0', { n: 0 }, { tools: ['!step0'] });
    expect(notFollowed._meta?.nextTool).toEqual({ tool: 'step1', arguments: { n: 1 } });
    expect(errorOf(await callToolWithChaining(client, 'step0', { n: 0 }, { targets: ['!step2'] }))?.code).toBe(
      ChainingErrorCode.TARGET_DENIED,
    );
  });

  it('lists the tools only when a directive appears', async () => {
    const client = await plainServer(new Runs());
    let lists = 0;
    const counting = {
      callTool: client.callTool.bind(client),
      listTools: (...a: Parameters<Client['listTools']>) => (lists++, client.listTools(...a)),
    };
    await callToolWithChaining(counting, 'step2', { n: 0 });
    expect(lists).toBe(0);
    await callToolWithChaining(counting, 'step0', { n: 0 });
    expect(lists).toBe(1);
  });

  it('rejects bad options naming the field', async () => {
    const client = await plainServer(new Runs());
    await expect(callToolWithChaining(client, 'step0', {}, { maxDepth: 0 })).rejects.toThrow(/maxDepth/);
  });
});

describe('callToolWithChaining against a Sluice server without the chaining plugin', () => {
  it('runs the chain in the client, in memory and over loopback HTTP', async () => {
    const runs = new Runs();
    const kit = await createTestKit({ tools: stepTools(2, runs) });
    closers.push(() => kit.close());
    expect(textOf(await callToolWithChaining(kit.client, 'step0', { n: 0 }))).toBe('step2:2');

    const listener = await kit.server.listen();
    const client = new Client({ name: 'app', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(listener.url));
    closers.push(async () => {
      await client.close();
      await listener.close();
    });
    const overHttp = await callToolWithChaining(client, 'step0', { n: 10 });
    expect(textOf(overHttp)).toBe('step2:12');
    expect(stepsOf(overHttp)).toEqual(['step1:ok', 'step2:ok']);
    expect(runs.of('step2')).toBe(2);
  });

  it("stops with the guard's refusal when the server sheds a chained call", async () => {
    const kit = await createTestKit({ plugins: [busyGuard(['step1'])], tools: stepTools(2) });
    closers.push(() => kit.close());
    const result = await callToolWithChaining(kit.client, 'step0', { n: 0 });
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.STEP_REFUSED);
    expect(errorOf(result)?.step).toMatchObject({ tool: 'step1', code: 'SERVER_BUSY', retryAfterMs: 500 });
    expect(stepsOf(result)).toEqual(['step1:SERVER_BUSY']);
    expect(textOf(result)).toContain('Result of "step0", the last call that ran:\nstep0:0');
  });

  it('stops when the server rejects a chained call its list advertised', async () => {
    const kit = await createTestKit({ tools: [{ name: 'A', handler: () => withNext(text('A'), 'ghost') }] });
    closers.push(() => kit.close());
    const ghost = { name: 'ghost', inputSchema: { type: 'object' as const } };
    const stale = {
      callTool: kit.client.callTool.bind(kit.client),
      listTools: async () => ({ tools: [...(await kit.client.listTools()).tools, ghost] }),
    };
    const result = await callToolWithChaining(stale, 'A', {});
    expect(errorOf(result)?.code).toBe(ChainingErrorCode.STEP_REFUSED);
    expect(textOf(result)).toContain('The chained call to "ghost" was rejected as invalid');
  });
});
