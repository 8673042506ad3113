// Three Sluice services, each a separate process on loopback HTTP, each importing the next:
// A imports B, B imports C, C imports A. They all listen first; then C imports A, B imports
// C, and A imports B last, so that every import finds its upstream up and A's own tools have
// come round the ring to B by the time A imports B.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, textOf } from '@sluice/testing';
import type { LoopGuardOptions } from '@sluice/plugin-loop-guard';
import { LoopGuardErrorCode } from '@sluice/plugin-loop-guard';
import type { ImportedEvent } from './mesh.js';
import { ServiceProcess } from './mesh.js';
import '@sluice/upstream';

interface Mesh {
  readonly a: ServiceProcess;
  readonly b: ServiceProcess;
  readonly c: ServiceProcess;
  /** What A's import of B reported. */
  readonly aImportsB: ImportedEvent;
}

async function startMesh(guard: (prefix: string) => LoopGuardOptions): Promise<Mesh> {
  const [a, b, c] = await Promise.all(
    ['serviceA', 'serviceB', 'serviceC'].map((p) => ServiceProcess.start(p, guard(p))),
  );
  await c!.import(a!);
  await b!.import(c!);
  const aImportsB = await a!.import(b!);
  return { a: a!, b: b!, c: c!, aImportsB };
}

const runsOf = async (service: ServiceProcess): Promise<number> =>
  (JSON.parse(textOf(await service.call(`${service.prefix}.stats`))) as { runs: number }).runs;

const stackOf = (text: string): unknown => (JSON.parse(text) as { stack: unknown }).stack;

const CYCLE_PATH = ['serviceB.run', 'serviceC.run', 'serviceA.run', 'serviceB.run'];

describe('a ring of three service processes with the loop guard', () => {
  let mesh: Mesh | undefined;
  beforeAll(async () => {
    mesh = await startMesh(() => ({}));
  }, 60_000);
  afterAll(async () => {
    if (mesh) await Promise.all([mesh.a.stop(), mesh.b.stop(), mesh.c.stop()]);
  });

  it('refuses A -> B -> C -> A with LOOP_DETECTED at C, before the call goes back to A, naming the path', async () => {
    const { a, b, c } = mesh!;
    const result = await a.call('serviceA.run', { path: CYCLE_PATH });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      side: 'consumer',
      entry: 'serviceA.run',
      cycle: ['serviceA.run', 'serviceB.run', 'serviceC.run', 'serviceA.run'],
    });
    expect(textOf(result)).toContain('serviceA.run -> serviceB.run -> serviceC.run -> serviceA.run');
    expect([await runsOf(a), await runsOf(b), await runsOf(c)]).toEqual([1, 1, 1]);
    expect(await c.waitForLogs('loop_guard.loop_detected')).toEqual([
      expect.objectContaining({ side: 'consumer', entry: 'serviceA.run' }),
    ]);
  });

  it('keeps every process up and serving calls that do not cycle, across process boundaries', async () => {
    const { a, b, c } = mesh!;
    await a.call('serviceA.run', { path: CYCLE_PATH });
    expect([a.running, b.running, c.running]).toEqual([true, true, true]);
    const across = await a.call('serviceA.run', { path: ['serviceB.run', 'serviceC.run'] });
    expect(stackOf(textOf(across))).toEqual(['serviceA.run', 'serviceB.run', 'serviceC.run']);
    const back = await c.call('serviceC.run', { path: ['serviceA.run', 'serviceB.run'] });
    expect(stackOf(textOf(back))).toEqual(['serviceC.run', 'serviceA.run', 'serviceB.run']);
    expect(stackOf(textOf(await b.call('serviceB.run')))).toEqual(['serviceB.run']);
  });

  it("leaves the re-import of A's own tools to core's name-collision check when no prefix is denied", () => {
    const own = mesh!.aImportsB.skipped.filter((s) => s.name.startsWith('serviceA.'));
    expect(own.map((s) => s.name).sort()).toEqual(['serviceA.run', 'serviceA.stats']);
    expect(own.every((s) => s.by === 'core')).toBe(true);
  });
});

describe('the same ring with each service denying its own prefix and naming itself', () => {
  let mesh: Mesh | undefined;
  beforeAll(async () => {
    mesh = await startMesh((prefix) => ({ denyToolPrefix: `${prefix}.`, originService: prefix }));
  }, 60_000);
  afterAll(async () => {
    if (mesh) await Promise.all([mesh.a.stop(), mesh.b.stop(), mesh.c.stop()]);
  });

  it('cuts the ring at import time: A does not import its own tools back from B, and says why', async () => {
    const { a, aImportsB } = mesh!;
    expect(aImportsB.imported.sort()).toEqual(['serviceB.run', 'serviceB.stats', 'serviceC.run', 'serviceC.stats']);
    expect(aImportsB.skipped).toEqual([
      { name: 'serviceA.run', reason: 'Denied by denyToolPrefix (serviceA.)', by: 'loop-guard' },
      { name: 'serviceA.stats', reason: 'Denied by denyToolPrefix (serviceA.)', by: 'loop-guard' },
    ]);
    const logged = await a.waitForLogs('loop_guard.skipped', 2);
    expect(logged.map((r) => r.tool)).toEqual(expect.arrayContaining(['serviceA.run', 'serviceA.stats']));
  });

  it('still refuses the call cycle at run time: A sees its own entry on arrival and never runs again', async () => {
    const { a, b, c } = mesh!;
    const result = await a.call('serviceA.run', { path: CYCLE_PATH });
    expect(errorOf(result)).toMatchObject({
      code: LoopGuardErrorCode.LOOP_DETECTED,
      side: 'provider',
      cycle: ['serviceA/serviceA.run', 'serviceB/serviceB.run', 'serviceC/serviceC.run', 'serviceA/serviceA.run'],
    });
    expect([await runsOf(a), await runsOf(b), await runsOf(c)]).toEqual([1, 1, 1]);
    expect(await a.waitForLogs('loop_guard.loop_detected')).toEqual([expect.objectContaining({ side: 'provider' })]);
    expect([a.running, b.running, c.running]).toEqual([true, true, true]);
    const across = await a.call('serviceA.run', { path: ['serviceB.run', 'serviceC.run'] });
    expect(stackOf(textOf(across))).toEqual([
      'serviceA/serviceA.run',
      'serviceB/serviceB.run',
      'serviceC/serviceC.run',
    ]);
  });
});
