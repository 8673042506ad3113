import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createTestKit, errorOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { CodeModeErrorCode, CodeModeEvent, codeMode } from '@sluice/plugin-code-mode';
import { CPU_BANK_MS, CpuShares } from '../src/cpu-shares.js';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { SCRIPT_NICE_STEP, ThreadCpuClock, ownThreadId } from '../src/thread-cpu.js';
import { ScriptPool } from '../src/pool.js';
import { SandboxLimits } from '../src/options.js';

describe('a CPU share', () => {
  const clock = () => {
    let now = 0;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  it('lets a caller spend its bank at once, then refuses it until its debt is paid at its share', () => {
    const time = clock();
    const shares = new CpuShares(0.25, time.now);
    expect(shares.admit('a')).toBeUndefined();
    // The bank: what a quarter of a core earns in 4 s.
    expect(shares.charge('a', 0.25 * CPU_BANK_MS)).toBe(0);
    expect(shares.charge('a', 200)).toBe(800);
    expect(shares.admit('a')).toBe(800);
    time.advance(400);
    expect(shares.admit('a')).toBe(400);
    time.advance(400);
    expect(shares.admit('a')).toBeUndefined();
    expect(shares.usage()).toEqual({ chargedMs: 1_200, refused: 2 });
  });

  it('banks no more than the share earns in CPU_BANK_MS, however long the caller was idle', () => {
    const time = clock();
    const shares = new CpuShares(0.5, time.now);
    shares.charge('a', 1);
    time.advance(3_600_000);
    expect(shares.charge('a', 0.5 * CPU_BANK_MS)).toBe(0);
    expect(shares.charge('a', 1)).toBe(2);
  });

  it("keeps callers apart: one caller's debt refuses no other", () => {
    const shares = new CpuShares(0.25, clock().now);
    shares.charge('a', 10_000);
    expect(shares.admit('a')).toBeGreaterThan(0);
    expect(shares.admit('b')).toBeUndefined();
  });

  it('holds any caller to its share plus its bank and the scripts it had running, over any stretch of time', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 4, noNaN: true }),
        fc.array(fc.record({ after: fc.nat({ max: 2_000 }), cost: fc.double({ min: 0, max: 500, noNaN: true }) }), {
          maxLength: 200,
        }),
        (share, scripts) => {
          const time = clock();
          const shares = new CpuShares(share, time.now);
          let spent = 0;
          let largest = 0;
          for (const { after, cost } of scripts) {
            time.advance(after);
            // A script starts only when its caller owes nothing; its cost is charged as it runs.
            if (shares.admit('a') !== undefined) continue;
            shares.charge('a', cost);
            spent += cost;
            largest = Math.max(largest, cost);
          }
          expect(spent).toBeLessThanOrEqual(share * CPU_BANK_MS + share * time.now() + largest + 1e-6);
        },
      ),
    );
  });
});

describe("a thread's CPU clock", () => {
  it('reads the time a thread ran, not the time it waited, and nothing for a thread that is not there', async () => {
    expect(ThreadCpuClock.open(0)).toBeUndefined();
    expect(ThreadCpuClock.open(2 ** 31 - 1)).toBeUndefined();
    // Linux only: where there is no /proc/thread-self, the pool measures a worker's busy event loop instead.
    if (process.platform !== 'linux') return;
    const clock = ThreadCpuClock.open(ownThreadId());
    expect(clock).toBeDefined();
    const before = clock!.ms()!;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const waited = clock!.ms()! - before;
    const spinUntil = performance.now() + 200;
    while (performance.now() < spinUntil);
    const ran = clock!.ms()! - before - waited;
    expect(ran).toBeGreaterThan(waited);
    clock!.close();
    expect(clock!.ms()).toBeUndefined();
  });
});

let kit: TestKit | undefined;
afterEach(async () => {
  await kit?.close();
  kit = undefined;
});

describe("a caller's scripts in the workers", () => {
  it("are held to the caller's share while it owes CPU, and its new scripts are refused with SCRIPTS_BUSY", async () => {
    const share = 0.1;
    const bankMs = share * CPU_BANK_MS;
    const plugin = codeMode({ limits: { cpuSharePerCaller: share, cpuMs: 60_000, timeoutMs: 60_000 } });
    const k = (kit = await createTestKit({ plugins: [plugin] }));
    const began = performance.now();
    const caller = new AbortController();
    const spinner = { ended: false };
    const spinning = k.server
      .call('execute_code', { code: 'for (;;) {}' }, { signal: caller.signal })
      .finally(() => (spinner.ended = true));
    // Once the spinning script has spent its caller's bank, the caller's next script is refused before it starts.
    let refused: ReturnType<typeof errorOf>;
    while (!spinner.ended && refused === undefined) {
      const result = await k.call('execute_code', { code: 'return 1;' });
      if (result.isError) refused = errorOf(result);
    }
    expect(refused).toMatchObject({ code: CodeModeErrorCode.SCRIPTS_BUSY, share: 'cpu' });
    expect(refused?.retryAfterMs).toBeGreaterThan(0);
    const logged = k.logs.events(CodeModeEvent.REFUSED).at(-1);
    expect(logged?.share).toBe('cpu');
    expect(logged?.owedMs).toBeGreaterThan(0);
    // Let it run until it has used 500 ms of CPU past its bank (five seconds at its share; under half a second at
    // full speed), then cancel it: a script held back hears the cancellation.
    await expect
      .poll(() => plugin.scripts().cpuChargedMs, { timeout: 60_000, interval: 50 })
      .toBeGreaterThan(bankMs + 500);
    caller.abort();
    await spinning.catch(() => undefined);
    const elapsedMs = performance.now() - began;
    await expect.poll(() => k.logs.events(CodeModeEvent.SCRIPT).length).toBeGreaterThan(0);
    const audited = k.logs
      .events(CodeModeEvent.SCRIPT)
      .find((event) => (event as { source?: string }).source === 'for (;;) {}') as
      { outcome: string; chargedMs: number } | undefined;
    expect(audited?.outcome).toBe(CodeModeErrorCode.CANCELLED);
    // What it was charged (its worker's CPU time, measured) stays within the share over its run, plus the bank,
    // the debt a running script may run into before it is held back, and one watchdog interval (100 ms).
    expect(audited!.chargedMs).toBeLessThanOrEqual(bankMs + share * elapsedMs + share * 250 + 100);
    expect(plugin.scripts().refused.cpu).toBeGreaterThan(0);
  });
});

/** The nice value of each thread of this process, by Linux thread id (field 19 of its `stat`, after the name). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const task of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      nices.set(Number(task), Number(fields[16]));
    } catch {
      // The thread ended while being read.
    }
  }
  return nices;
}

/** Whether a process like this one may raise its priority again once lowered (a privilege: CAP_SYS_NICE). */
function mayRaisePriority(): boolean {
  const probe = spawnSync(process.execPath, [
    '-e',
    'const os = require("node:os"); os.setPriority(os.getPriority() + 1); os.setPriority(os.getPriority() - 1);',
  ]);
  return probe.status === 0;
}

describe('the threads scripts run in', () => {
  /** The threads of this process, not in `before`, that run `step` nice levels below `nice`. */
  const loweredSince = (before: Map<number, number>, nice: number) =>
    [...threadNices()].filter(([id, n]) => !before.has(id) && n === nice + SCRIPT_NICE_STEP).map(([id]) => id);

  /** Runs `return 1` as soon as the kit's caller has paid what it owes (until then it is refused for CPU). */
  const once = async (k: TestKit) => {
    await expect
      .poll(async () => (await k.call('execute_code', { code: 'return 1;' })).isError === true, { timeout: 20_000 })
      .toBe(false);
  };

  it("drop below the main thread's priority once their caller owes CPU, and only then", async () => {
    // Linux only: elsewhere a thread's priority is not set on its own, and the CPU shares alone hold.
    if (process.platform !== 'linux') return;
    const main = ownThreadId();
    const before = threadNices();
    const mainNice = before.get(main)!;
    expect(mainNice).toBeLessThanOrEqual(19 - SCRIPT_NICE_STEP);
    // A bank of 200 ms of CPU.
    const plugin = codeMode({ limits: { cpuSharePerCaller: 0.05 } });
    const k = (kit = await createTestKit({ plugins: [plugin] }));
    // A short script keeps the main thread's priority: no thread of the process is lowered.
    const short = await k.call('execute_code', { code: 'let n = 0; for (let i = 0; i < 1e3; i++) n += i; return n;' });
    expect(short.isError).toBeFalsy();
    expect([...threadNices().values()].every((nice) => nice === mainNice)).toBe(true);
    // A script that spends its caller's bank runs SCRIPT_NICE_STEP below the main thread from then on.
    const caller = new AbortController();
    let ended: string | undefined;
    const spinning = k.server.call('execute_code', { code: 'for (;;) {}' }, { signal: caller.signal }).then(
      (result) => void (ended ??= JSON.stringify(result).slice(0, 300)),
      (error: unknown) => void (ended ??= String(error)),
    );
    // Until the script's thread is lowered, or the script ends first (which the assertion below reports).
    await expect
      .poll(() => loweredSince(before, mainNice).length === 1 || ended !== undefined, { timeout: 20_000, interval: 20 })
      .toBe(true);
    expect(ended, 'the spinning script ended before its thread was lowered').toBeUndefined();
    const newThreads = [...threadNices()].filter(([id]) => !before.has(id));
    expect(
      loweredSince(before, mainNice).length,
      `one new thread lowered to ${mainNice + SCRIPT_NICE_STEP}; new threads and their nice values: ${JSON.stringify(newThreads)}, CPU charged ${plugin.scripts().cpuChargedMs} ms`,
    ).toBe(1);
    // Nothing else is lowered: the main thread and every thread that was there before keep their priority.
    const during = threadNices();
    expect(during.get(main)).toBe(mainNice);
    for (const [id, nice] of before) if (during.has(id)) expect(during.get(id)).toBe(nice);
    // A spinning script does not hear its cancellation: its worker is ended, and the next script runs on another,
    // at the main thread's priority.
    caller.abort();
    await spinning;
    await expect
      .poll(() => [...threadNices().values()].every((nice) => nice === mainNice), { timeout: 20_000 })
      .toBe(true);
    await once(k);
    expect([...threadNices().values()].every((nice) => nice === mainNice)).toBe(true);
  });

  it('is lowered on a new worker whose caller owes CPU before the worker has said which thread it is', async () => {
    if (process.platform !== 'linux') return;
    const main = ownThreadId();
    const before = threadNices();
    const mainNice = before.get(main)!;
    // A watchdog tick every 10 ms: the first comes long before a new worker has started and written its thread id.
    const limits = SandboxLimits.parse({ cpuMs: 100, timeoutMs: 20_000 });
    const pool = new ScriptPool();
    const caller = new AbortController();
    try {
      const outcome = pool.run({
        source: 'for (;;) {}',
        layout: {},
        limits,
        signal: caller.signal,
        // The script calls no tool.
        call: () => Promise.resolve({ ok: false, code: 'UNKNOWN_TOOL', message: 'no tools here' }),
        onFault: () => {},
        // A caller that owes CPU from the start (its other scripts spent it): held back, and lowered.
        charge: () => 60_000,
      });
      let ended: string | undefined;
      void outcome.then((result) => void (ended = JSON.stringify(result).slice(0, 300)));
      await expect
        .poll(() => loweredSince(before, mainNice).length === 1 || ended !== undefined, {
          timeout: 20_000,
          interval: 20,
        })
        .toBe(true);
      expect(ended, 'the script ended before its thread was lowered').toBeUndefined();
      expect(loweredSince(before, mainNice)).toHaveLength(1);
      caller.abort();
      await outcome;
    } finally {
      caller.abort();
      await pool.close();
    }
  });

  it('get their priority back after a lowered script, where the gateway may raise it; else their worker ends', async () => {
    if (process.platform !== 'linux') return;
    const before = threadNices();
    const mainNice = before.get(ownThreadId())!;
    let lowered: number | undefined;
    const k = (kit = await createTestKit({
      // A bank of 200 ms of CPU: the script computes past it, and is held to its share from then on.
      plugins: [codeMode({ limits: { cpuSharePerCaller: 0.05, maxToolCalls: 100_000 } })],
      tools: [
        {
          // Answers whether the script's worker runs lowered yet: the script computes until it does.
          name: 'lowered',
          handler: () => {
            lowered ??= loweredSince(before, mainNice)[0];
            return { content: [{ type: 'text' as const, text: String(lowered !== undefined) }] };
          },
        },
      ],
    }));
    const code = 'while ((await local.lowered()) !== "true") { for (let i = 0; i < 1e5; i++) {} } return "lowered";';
    const result = await k.call('execute_code', { code });
    expect(result.isError).toBeFalsy();
    expect(lowered).toBeDefined();
    // The script ended on its own: its worker is kept only with its priority back (else it is ending).
    await expect
      .poll(() => [...threadNices().values()].every((nice) => nice === mainNice), { timeout: 20_000 })
      .toBe(true);
    expect(threadNices().has(lowered!)).toBe(mayRaisePriority());
    // Once its caller has paid, the next script runs at the main thread's priority, on that worker where it was kept.
    await once(k);
    expect([...threadNices().values()].every((nice) => nice === mainNice)).toBe(true);
  });
});
