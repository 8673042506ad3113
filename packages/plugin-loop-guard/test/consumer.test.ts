// The consumer side, through core's real upstream import: what a proxied call carries
// upstream, and which proxied calls are refused before they leave.
import { afterEach, describe, expect, it } from 'vitest';
import { MetaKey, createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { captureLogger, createTestKit, errorOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { LoopGuardErrorCode, loopGuard } from '@sluice/plugin-loop-guard';
import type { LoopGuardOptions } from '@sluice/plugin-loop-guard';
import { hop, readForwarded } from './tools.js';
import '@sluice/upstream';

interface Received {
  readonly ours: unknown;
  readonly plain: unknown;
  readonly origin: unknown;
}

/** Service B: a `serviceB.probe` tool that records the `_meta` each request brought, guarded or not. */
function serviceB(guard?: LoopGuardOptions): { server: SluiceServer; received: Received[] } {
  const received: Received[] = [];
  const server = createServer({
    name: 'serviceB',
    version: '1.0.0',
    plugins: guard ? [loopGuard(guard)] : [],
    logger: captureLogger().logger,
  });
  const probe = hop('serviceB.probe');
  server.tool({
    ...probe,
    handler: (args, ctx) => {
      received.push({
        ours: ctx.meta[MetaKey.CALL_STACK],
        plain: ctx.meta.callStack,
        origin: ctx.meta[MetaKey.ORIGIN],
      });
      return probe.handler(args, ctx);
    },
  });
  return { server, received };
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

/** Service A, with `serviceA.run` local and B's tools imported in-process. */
async function serviceA(b: SluiceServer, guard: LoopGuardOptions = {}, namespace?: string): Promise<TestKit> {
  const kit = await createTestKit({
    plugins: [loopGuard(guard)],
    tools: [hop('serviceA.run')],
    server: { name: 'serviceA' },
  });
  open.push(kit, b);
  const result = await kit.server.import({
    name: 'b',
    connection: { type: 'in-process', server: b.createSdkServer() },
    ...(namespace ? { namespace } : {}),
  });
  expect(result.skipped).toEqual([]);
  return kit;
}

describe('the consumer side', () => {
  it('sends the extended stack upstream under both keys, with the origin', async () => {
    const b = serviceB({ originService: 'svcB' });
    const a = await serviceA(b.server, { originService: 'svcA' });
    const seen = readForwarded(await a.call('serviceA.run', { path: ['serviceB.probe'] }));
    expect(b.received).toEqual([{ ours: ['svcA/serviceA.run'], plain: ['svcA/serviceA.run'], origin: 'svcA' }]);
    expect(seen).toEqual({
      stack: ['svcA/serviceA.run', 'svcB/serviceB.probe'],
      plain: ['svcA/serviceA.run', 'svcB/serviceB.probe'],
      origin: 'svcB',
    });
  });

  it('passes on a stack that came in under the plain key only, under both keys, with its relay entry', async () => {
    const b = serviceB();
    const a = await serviceA(b.server);
    await a.call('serviceB.probe', {}, { callStack: ['serviceX.run', 'getAnalysis'] });
    const stack = ['serviceX.run', 'getAnalysis', 'tools/call serviceB.probe'];
    expect(b.received).toEqual([{ ours: stack, plain: stack, origin: undefined }]);
  });

  it("marks a client's call it relays with its own entry, checked for a repeat when it has a name", async () => {
    const b = serviceB({ originService: 'svcB' });
    const a = await serviceA(b.server, { originService: 'svcA' });
    await a.call('serviceB.probe');
    expect(b.received).toEqual([{ ours: ['svcA/serviceB.probe'], plain: ['svcA/serviceB.probe'], origin: 'svcA' }]);
    // The call came back to A for the same tool: A relayed it before, so it is a loop on A's side.
    const result = await a.call('serviceB.probe', {}, { callStack: ['svcA/serviceB.probe', 'svcC/relay'] });
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      side: 'consumer',
      entry: 'svcA/serviceB.probe',
      cycle: ['svcA/serviceB.probe', 'svcC/relay', 'svcA/serviceB.probe'],
    });
    expect(b.received).toHaveLength(1);
  });

  it('counts an unnamed relay entry for depth only: a repeat of it is no loop', async () => {
    const b = serviceB();
    const a = await serviceA(b.server, { maxDepth: 3 });
    const repeat = ['tools/call serviceB.probe', 'tools/call serviceB.probe'];
    expect(errorOf(await a.call('serviceB.probe', {}, { callStack: repeat }))).toBeUndefined();
    expect(b.received.at(-1)?.ours).toEqual([...repeat, 'tools/call serviceB.probe']);
    const deep = await a.call('serviceB.probe', {}, { callStack: [...repeat, 'x.run'] });
    expect(errorOf(deep)).toMatchObject({ code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP, depth: 3, maxDepth: 3 });
  });

  it('refuses a proxied call before it leaves when the upstream tool is already in the stack', async () => {
    const b = serviceB();
    const a = await serviceA(b.server);
    const result = await a.call('serviceB.probe', {}, { callStack: ['serviceB.probe', 'serviceA.run'] });
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      side: 'consumer',
      cycle: ['serviceB.probe', 'serviceA.run', 'serviceB.probe'],
    });
    expect(b.received).toEqual([]);
    expect(a.logs.events('loop_guard.loop_detected')[0]).toMatchObject({ side: 'consumer', entry: 'serviceB.probe' });
  });

  it("checks the upstream's name for the tool, not the namespaced name it has here", async () => {
    const b = serviceB();
    const a = await serviceA(b.server, {}, 'b');
    expect((await a.listTools()).map((t) => t.name).sort()).toEqual(['b_serviceB.probe', 'serviceA.run']);
    const result = await a.call('b_serviceB.probe', {}, { callStack: ['serviceB.probe'] });
    expect(errorOf(result)?.code).toBe(LoopGuardErrorCode.LOOP_DETECTED);
    expect(b.received).toEqual([]);
    expect(readForwarded(await a.call('b_serviceB.probe')).stack).toBeUndefined();
    // A's own entry names the tool as A exposes it.
    expect(b.received).toEqual([
      { ours: ['tools/call b_serviceB.probe'], plain: ['tools/call b_serviceB.probe'], origin: undefined },
    ]);
  });

  it('refuses a proxied call when the stack is already maxDepth long, before it leaves', async () => {
    const b = serviceB();
    const a = await serviceA(b.server, { maxDepth: 2 });
    const result = await a.call('serviceB.probe', {}, { callStack: ['x.one', 'x.two'] });
    expect(errorOf(result)).toMatchObject({ code: LoopGuardErrorCode.CALL_STACK_TOO_DEEP, depth: 2, maxDepth: 2 });
    expect(b.received).toEqual([]);
  });

  it('lets the upstream refuse a repeat it can see and the consumer cannot (qualified entries)', async () => {
    const b = serviceB({ originService: 'svcB' });
    const a = await serviceA(b.server, { originService: 'svcA' });
    const result = await a.call('serviceB.probe', {}, { callStack: ['svcB/serviceB.probe'] });
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      side: 'provider',
      cycle: ['svcB/serviceB.probe', 'svcA/serviceB.probe', 'svcB/serviceB.probe'],
    });
    expect(b.received).toEqual([]);
  });
});
