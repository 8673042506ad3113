import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ScriptCpuAccount } from '../src/thread-cpu.js';

/** A wall clock and a thread's CPU clock that tests move by hand: the thread runs `cpu` ms of every `wall` ms. */
function clocks() {
  const time = { wall: 1_000, cpu: 0 };
  return {
    time,
    wall: () => time.wall,
    cpu: () => time.cpu,
    pass: (wall: number, cpu: number) => {
      time.wall += wall;
      time.cpu += cpu;
    },
  };
}

describe("a script's CPU account", () => {
  it("counts wall time up to half the limit, then the thread's CPU time: a loaded machine does not count against the script", () => {
    const c = clocks();
    const account = new ScriptCpuAccount(100, c.cpu, c.wall);
    account.begin();
    // The thread runs a quarter of the time: 40 ms of wall time is 10 ms of CPU.
    c.pass(40, 10);
    expect(account.ms()).toBe(40);
    c.pass(20, 5);
    // Past half the limit: from here on the CPU clock counts.
    expect(account.ms()).toBe(60);
    c.pass(200, 50);
    expect(account.ms()).toBe(110);
    account.end();
    expect(account.ms()).toBe(110);
    // Between slices nothing counts; the next slice counts CPU at once.
    c.pass(500, 100);
    account.begin();
    c.pass(8, 2);
    expect(account.ms()).toBe(112);
    account.end();
  });

  it('counts wall time throughout without a CPU clock, and never the time a script was held back', () => {
    const c = clocks();
    const account = new ScriptCpuAccount(100, () => undefined, c.wall);
    account.begin();
    c.pass(300, 30);
    account.waited(100);
    expect(account.ms()).toBe(200);
    account.end();
    expect(account.ms()).toBe(200);
  });

  it('counts the wall time between readings of the CPU clock, read at most every millisecond', () => {
    const c = clocks();
    let reads = 0;
    const account = new ScriptCpuAccount(10, () => (reads++, c.cpu()), c.wall);
    account.begin();
    c.pass(6, 6);
    expect(account.ms()).toBe(6);
    const before = reads;
    c.pass(0.5, 0.1);
    expect(account.ms()).toBe(6.5);
    expect(reads).toBe(before);
    c.pass(0.5, 0.1);
    expect(account.ms()).toBeCloseTo(6.2);
    expect(reads).toBe(before + 1);
  });

  it('answers at least the CPU time and at most the wall time its slices took, whatever the load', () => {
    const step = fc.oneof(
      fc.constant({ kind: 'begin' as const }),
      fc.constant({ kind: 'end' as const }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.double({ min: 0, max: 50, noNaN: true }) }),
      fc.record({
        kind: fc.constant('run' as const),
        wall: fc.double({ min: 0, max: 50, noNaN: true }),
        share: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.boolean(),
        fc.array(step, { maxLength: 60 }),
        (limit, hasClock, steps) => {
          const c = clocks();
          const account = new ScriptCpuAccount(limit, hasClock ? c.cpu : () => undefined, c.wall);
          let inSlice = false;
          let cpuInSlices = 0;
          let wallInSlices = 0;
          for (const s of steps) {
            if (s.kind === 'begin' && !inSlice) {
              account.begin();
              inSlice = true;
            } else if (s.kind === 'end') {
              account.end();
              inSlice = false;
            } else if (s.kind === 'wait') {
              c.pass(s.ms, 0);
              if (inSlice) account.waited(s.ms);
            } else if (s.kind === 'run') {
              c.pass(s.wall, s.wall * s.share);
              if (inSlice) {
                cpuInSlices += s.wall * s.share;
                wallInSlices += s.wall;
              }
            }
            const ms = account.ms();
            expect(ms).toBeGreaterThanOrEqual(cpuInSlices - 1e-6);
            expect(ms).toBeLessThanOrEqual(wallInSlices + 1e-6);
          }
        },
      ),
    );
  });
});
