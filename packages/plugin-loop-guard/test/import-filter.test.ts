import { describe, expect, it } from 'vitest';
import { createServer } from '@sluice/core';
import type { ToolSource } from '@sluice/core';
import { captureLogger, createTestKit } from '@sluice/testing';
import { loopGuard } from '@sluice/plugin-loop-guard';
import type { LoopGuardOptions } from '@sluice/plugin-loop-guard';
import { hop } from './tools.js';
import { answer, upstreamDraft } from './upstream.js';
import '@sluice/upstream';

async function importInto(options: LoopGuardOptions, tools: [upstream: string, name: string][]) {
  const kit = await createTestKit({ plugins: [loopGuard(options)], tools: [hop('serviceA.run')] });
  const source: ToolSource = { kind: 'upstream', upstream: tools[0]![0], originalName: '', trusted: false };
  const result = await kit.server.admit(
    source,
    tools.map(([upstream, name]) => upstreamDraft(upstream, name, answer)),
  );
  return { kit, result };
}

describe('the import hook', () => {
  it("skips upstream tools whose name starts with a denied prefix, in the seed's wording", async () => {
    const { kit, result } = await importInto({ denyToolPrefix: 'serviceA.' }, [
      ['serviceB', 'serviceA.processIncident'],
      ['serviceB', 'getData'],
    ]);
    expect(result.imported).toEqual(['getData']);
    expect(result.skipped).toEqual([
      { name: 'serviceA.processIncident', reason: 'Denied by denyToolPrefix (serviceA.)', by: 'loop-guard' },
    ]);
    expect(kit.server.skipped()).toEqual(result.skipped);
    expect(kit.logs.events('loop_guard.skipped')[0]).toMatchObject({
      tool: 'serviceA.processIncident',
      upstream: 'serviceB',
    });
    expect((await kit.listTools()).map((t) => t.name).sort()).toEqual(['getData', 'serviceA.run']);
    await kit.close();
  });

  it('reports what it denied in the skipped list of a real server.import()', async () => {
    const upstream = createServer({ name: 'serviceB', version: '1.0.0', logger: captureLogger().logger });
    for (const name of ['serviceA.processIncident', 'getData']) upstream.tool({ ...hop(name) });
    const kit = await createTestKit({ plugins: [loopGuard({ denyToolPrefix: 'serviceA.' })] });
    const result = await kit.server.import({
      name: 'serviceB',
      connection: { type: 'in-process', server: upstream.createSdkServer() },
    });
    expect(result).toEqual({
      imported: ['getData'],
      skipped: [{ name: 'serviceA.processIncident', reason: 'Denied by denyToolPrefix (serviceA.)', by: 'loop-guard' }],
    });
    await kit.close();
    await upstream.close();
  });

  it('takes a list of prefixes and names the one that matched', async () => {
    const { kit, result } = await importInto({ denyToolPrefix: ['serviceA.', 'serviceC.'] }, [
      ['serviceB', 'serviceC.step'],
      ['serviceB', 'serviceB.work'],
    ]);
    expect(result.skipped).toEqual([
      { name: 'serviceC.step', reason: 'Denied by denyToolPrefix (serviceC.)', by: 'loop-guard' },
    ]);
    await kit.close();
  });

  it('matches the name at the upstream, not the name a namespace gives it here', async () => {
    const kit = await createTestKit({ plugins: [loopGuard({ denyToolPrefix: 'serviceA.' })] });
    const source: ToolSource = { kind: 'upstream', upstream: 'b', originalName: '', trusted: false };
    const result = await kit.server.admit(source, [
      upstreamDraft('b', 'serviceA.run', answer, 'b.serviceA.run'),
      upstreamDraft('b', 'work', answer, 'serviceA.work'),
    ]);
    expect(result.imported).toEqual(['serviceA.work']);
    expect(result.skipped.map((s) => s.name)).toEqual(['b.serviceA.run']);
    await kit.close();
  });

  it('imports only what allowTools names, with globs and upstream/pattern', async () => {
    const { kit, result } = await importInto({ allowTools: ['getData', 'get*Status', 'getD?ta', 'other/delete*'] }, [
      ['partner', 'getData'],
      ['partner', 'getDiskStatus'],
      ['partner', 'deleteAll'],
      ['partner', 'getData2'],
      ['partner', 'getDota'],
    ]);
    expect(result.imported).toEqual(['getData', 'getDiskStatus', 'getDota']);
    expect(result.skipped).toEqual([
      { name: 'deleteAll', reason: 'Not in allowTools', by: 'loop-guard' },
      { name: 'getData2', reason: 'Not in allowTools', by: 'loop-guard' },
    ]);
    await kit.close();
  });

  it('limits an upstream/pattern to the tools of that upstream', async () => {
    const { kit, result } = await importInto({ allowTools: ['partner/delete*'] }, [
      ['partner', 'deleteAll'],
      ['other', 'deleteSome'],
    ]);
    expect(result.imported).toEqual(['deleteAll']);
    expect(result.skipped.map((s) => s.name)).toEqual(['deleteSome']);
    await kit.close();
  });

  it('leaves out what a ! selector in allowTools excludes', async () => {
    const { kit, result } = await importInto({ allowTools: ['*', '!partner/delete*'] }, [
      ['partner', 'deleteAll'],
      ['partner', 'getAll'],
      ['other', 'deleteSome'],
    ]);
    expect(result.imported).toEqual(['getAll', 'deleteSome']);
    await kit.close();
  });

  it('reads a dot in a pattern as a dot, not as any character', async () => {
    const { kit, result } = await importInto({ allowTools: ['svc.get'] }, [
      ['p', 'svcXget'],
      ['p', 'svc.get'],
    ]);
    expect(result.imported).toEqual(['svc.get']);
    await kit.close();
  });

  it('never touches local tools', async () => {
    const kit = await createTestKit({
      plugins: [loopGuard({ denyToolPrefix: 'serviceA.', allowTools: ['nothing'] })],
      tools: [hop('serviceA.run')],
    });
    expect((await kit.listTools()).map((t) => t.name)).toEqual(['serviceA.run']);
    await kit.close();
  });

  it('in audit mode logs what it would skip and imports it anyway', async () => {
    const { kit, result } = await importInto({ denyToolPrefix: 'serviceA.', mode: 'audit' }, [
      ['serviceB', 'serviceA.x'],
    ]);
    expect(result.imported).toEqual(['serviceA.x']);
    expect(kit.logs.events('loop_guard.would_skip')[0]).toMatchObject({
      tool: 'serviceA.x',
      reason: 'Denied by denyToolPrefix (serviceA.)',
    });
    await kit.close();
  });

  it('does not tap the import hook when there is nothing to filter', async () => {
    const kit = await createTestKit({ plugins: [loopGuard()] });
    expect(kit.server.hooks.import.isUsed()).toBe(false);
    await kit.close();
  });
});
