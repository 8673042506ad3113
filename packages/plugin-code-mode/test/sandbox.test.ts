import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestKit, textOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { CodeModeErrorCode, CodeModeEvent, codeMode } from '@sluice/plugin-code-mode';
import type { CodeModeOptions } from '@sluice/plugin-code-mode';
import { MODULE_HEADROOM, moduleMemoryBytes } from '../src/engine.js';
import { ping, price, resultOf, stoppedWith } from './helpers.js';

let kit: TestKit | undefined;
afterEach(async () => kit?.close());

/**
 * A server with code mode whose CPU and wall limits stay out of the way unless a test sets them: the
 * sandbox's "CPU time" is the wall time of its slices (compiling the script included), which a loaded
 * machine stretches, so a test about another limit or an error would otherwise race them.
 */
async function start(limits: CodeModeOptions['limits'] = {}): Promise<TestKit> {
  kit = await createTestKit({
    plugins: [codeMode({ limits: { memoryBytes: 16 << 20, cpuMs: 25_000, timeoutMs: 25_000, ...limits } })],
    tools: [ping, price],
  });
  return kit;
}

const run = (k: TestKit, code: string) => k.call('execute_code', { code });

/** After a script was stopped, the server still serves: a script and a direct call both answer. */
async function stillServes(k: TestKit): Promise<void> {
  expect(resultOf(await run(k, 'return await local.ping()'))).toBe('pong');
  expect(textOf(await k.call('ping'))).toBe('pong');
}

describe('a hostile script is stopped with a clear error and the server keeps serving', () => {
  it('stops while(true){} at its CPU time, even inside try/catch', async () => {
    const k = await start({ cpuMs: 300 });
    const result = await run(k, 'try { while (true) {} } catch (e) { return "escaped"; }');
    expect(stoppedWith(result)).toBe(CodeModeErrorCode.CPU_LIMIT);
    expect(textOf(result)).toContain('ran past its 300 ms of CPU time');
    await stillServes(k);
  });

  it('stops a script that waits forever for a tool at its wall time', async () => {
    kit = await createTestKit({
      plugins: [codeMode({ limits: { memoryBytes: 16 << 20, timeoutMs: 200 } })],
      tools: [ping, { name: 'hold', handler: () => new Promise<never>(() => {}) }],
      // The held call never settles: closing the kit waits for it no longer than this.
      server: { drainTimeoutMs: 100 },
    });
    const result = await run(kit, 'await local.hold();');
    expect(stoppedWith(result)).toBe(CodeModeErrorCode.SCRIPT_TIMEOUT);
    await stillServes(kit);
  });

  it('stops a script that awaits a promise nothing can settle at once (SCRIPT_STALLED), not at its wall time', async () => {
    // A wall time the test would notice: the stall is seen as soon as the script has nothing running.
    const k = await start({ timeoutMs: 60_000 });
    for (const code of [
      'await new Promise(() => {});',
      'await local.ping(); await new Promise(() => {});',
      'await Promise.all([local.ping(), new Promise(() => {})]);',
    ]) {
      const result = await run(k, code);
      expect(stoppedWith(result), code).toBe(CodeModeErrorCode.SCRIPT_STALLED);
    }
    // A promise that a tool's reply settles later is not a stall.
    const settledLater = 'let done; const p = new Promise((r) => (done = r)); local.ping().then(done); return await p;';
    expect(resultOf(await run(k, settledLater))).toBe('pong');
    await stillServes(k);
  });

  it('stops an allocation of 1 GB at its memory limit', async () => {
    // Near its heap limit, QuickJS's allocator in a fresh module can work for seconds between two
    // interrupt checks; the CPU time here is large enough that the memory limit is what stops the loop.
    const k = await start({ cpuMs: 25_000, timeoutMs: 25_000 });
    expect(stoppedWith(await run(k, 'const big = new Uint8Array(1024 * 1024 * 1024); return big.length;'))).toBe(
      CodeModeErrorCode.MEMORY_LIMIT,
    );
    expect(stoppedWith(await run(k, 'const all = []; for (;;) all.push(new Uint8Array(1 << 20)); return 1;'))).toBe(
      CodeModeErrorCode.MEMORY_LIMIT,
    );
    await stillServes(k);
  });

  it('bounds what typed arrays take, which the heap limit does not count, by the heap limit plus the headroom', async () => {
    const k = await start({ memoryBytes: 16 << 20, cpuMs: 25_000, timeoutMs: 25_000 });
    const script =
      'const all = []; try { for (;;) all.push(new Uint8Array(1 << 20)); } catch (e) { return [all.length, String(e)]; }';
    const [megabytes, error] = resultOf(await run(k, script)) as [number, string];
    expect(error).toMatch(/out of memory/);
    // A module whose memory could grow took 2 GB here before the allocator failed; one of six times the heap, 128 MB.
    expect(moduleMemoryBytes(16 << 20)).toBe((16 << 20) + MODULE_HEADROOM);
    expect(megabytes).toBeLessThanOrEqual(moduleMemoryBytes(16 << 20) / (1 << 20));
    await stillServes(k);
  });

  it('stops unbounded recursion at its stack limit, and recovers from the fault it leaves in the module', async () => {
    const k = await start();
    expect(stoppedWith(await run(k, 'const f = (n) => f(n + 1) + 1; return f(0);'))).toBe(
      CodeModeErrorCode.MEMORY_LIMIT,
    );
    await stillServes(k);
  });

  it('classifies a stack overflow as MEMORY_LIMIT even when its stack trace is larger than maxOutputBytes', async () => {
    // The trace of an overflow is tens of KB; the script returned nothing, so no output limit applies.
    const k = await start({ maxOutputBytes: 2_048 });
    const result = await run(k, 'const f = (n) => f(n + 1) + 1; return f(0);');
    expect(stoppedWith(result)).toBe(CodeModeErrorCode.MEMORY_LIMIT);
    expect(textOf(result)).not.toContain('larger than');
    await stillServes(k);
  });

  it('stops a script that calls 10,000 tools at its call limit, however it catches', async () => {
    // Only the call limit may stop it (see start()).
    const k = await start({ maxToolCalls: 50 });
    const result = await run(
      k,
      'for (let i = 0; i < 10000; i++) { try { await local.ping(); } catch (e) {} } return "all done";',
    );
    expect(stoppedWith(result)).toBe(CodeModeErrorCode.TOOL_CALL_LIMIT);
    expect(textOf(result)).toContain('more than 50 tool calls');
    await stillServes(k);
  });

  it.each([
    ['reads process', 'return process.env', /ReferenceError: 'process' is not defined/],
    ['calls require', 'return require("child_process")', /ReferenceError: 'require' is not defined/],
    [
      'climbs to the Function constructor',
      'return globalThis.constructor.constructor("return process")().env',
      /ReferenceError: 'process' is not defined/,
    ],
    ['imports dynamically', 'const fs = await import("node:fs"); return 1', /Scripts cannot import modules/],
    ['imports statically', 'import fs from "fs"; return 1', /SyntaxError/],
    ['looks for timers', 'setTimeout(() => {}, 1); return 1', /ReferenceError: 'setTimeout' is not defined/],
    ['looks for the network', 'return await fetch("http://127.0.0.1:1/")', /ReferenceError: 'fetch' is not defined/],
  ])('refuses a script that %s', async (_what, code, message) => {
    const k = await start();
    const result = await run(k, code);
    expect(stoppedWith(result)).toBe(CodeModeErrorCode.SCRIPT_ERROR);
    expect(textOf(result)).toMatch(message);
    await stillServes(k);
  });

  it('sees nothing of the host among its globals', async () => {
    const k = await start();
    const names = resultOf(await run(k, 'return Object.getOwnPropertyNames(globalThis)')) as string[];
    for (const host of ['process', 'require', 'module', 'Buffer', 'fetch', 'setTimeout', 'hostCall', 'hostDone'])
      expect(names).not.toContain(host);
    expect(names).toEqual(expect.arrayContaining(['callTool', 'ToolError', 'console', 'local']));
  });

  it('refuses a result larger than maxOutputBytes', async () => {
    const k = await start({ maxOutputBytes: 1024 });
    expect(stoppedWith(await run(k, 'return "x".repeat(5000)'))).toBe(CodeModeErrorCode.OUTPUT_TOO_LARGE);
    await stillServes(k);
  });

  it('cuts console output at maxOutputBytes', async () => {
    // Room in time for a loaded machine: the point here is the output cut, not the CPU limit.
    const k = await start({ maxOutputBytes: 1024, cpuMs: 5_000, timeoutMs: 10_000 });
    const result = await run(k, 'for (let i = 0; i < 1000; i++) console.log("line " + i); return 1;');
    const logs = (result.structuredContent as { logs: string[] }).logs;
    expect(logs.at(-1)).toBe('[console output cut at 1024 bytes]');
    expect(logs.slice(0, -1).join('\n').length).toBeLessThanOrEqual(1024);
  });

  it('refuses a script longer than maxScriptBytes before running it', async () => {
    const k = await start({ maxScriptBytes: 1024 });
    expect(stoppedWith(await run(k, `return 1; // ${'x'.repeat(2000)}`))).toBe(CodeModeErrorCode.SCRIPT_TOO_LARGE);
  });

  it('reports a syntax error with its line', async () => {
    const k = await start();
    const result = await run(k, 'const a = 1;\nconst b = ;\nreturn a;');
    expect(stoppedWith(result)).toBe(CodeModeErrorCode.SCRIPT_ERROR);
    expect(textOf(result)).toMatch(/SyntaxError.*line 2/);
  });

  it('answers a call to a tool that is not bound with a ToolError coded TOOL_NOT_AVAILABLE', async () => {
    const k = await start();
    const script = `try { await callTool('shutdown_everything', {}); return 'called'; } catch (e) { return [e.name, e.code]; }`;
    expect(resultOf(await run(k, script))).toEqual(['ToolError', CodeModeErrorCode.TOOL_NOT_AVAILABLE]);
    await stillServes(k);
  });

  it('keeps no state from one script to the next', async () => {
    const k = await start();
    await run(k, 'globalThis.leak = 42; Object.prototype.polluted = true; return 1;');
    expect(resultOf(await run(k, 'return [typeof leak, ({}).polluted === undefined]'))).toEqual(['undefined', true]);
  });

  it('runs at most maxConcurrentCalls of one script’s calls at once', async () => {
    let active = 0;
    let peak = 0;
    kit = await createTestKit({
      plugins: [codeMode({ limits: { maxConcurrentCalls: 3 } })],
      tools: [
        {
          name: 'slow',
          handler: async () => {
            peak = Math.max(peak, ++active);
            await new Promise((resolve) => setTimeout(resolve, 20));
            active--;
            return { content: [{ type: 'text' as const, text: 'ok' }] };
          },
        },
      ],
    });
    const result = await run(kit, 'return (await Promise.all(Array.from({ length: 10 }, () => local.slow()))).length');
    expect(resultOf(result)).toBe(10);
    expect(peak).toBe(3);
  });

  it('refuses a script beyond maxConcurrentScripts with SCRIPTS_BUSY, and logs the refusal', async () => {
    let started = () => {};
    const holding = new Promise<void>((resolve) => (started = resolve));
    kit = await createTestKit({
      plugins: [codeMode({ limits: { maxConcurrentScripts: 1, timeoutMs: 1_000 } })],
      tools: [{ name: 'hold', handler: () => (started(), new Promise<never>(() => {})) }],
      // The held call never settles: closing the kit waits for it no longer than this.
      server: { drainTimeoutMs: 100 },
    });
    const slow = run(kit, 'await local.hold();');
    await holding;
    expect(stoppedWith(await run(kit, 'return 1'))).toBe(CodeModeErrorCode.SCRIPTS_BUSY);
    expect(kit.logs.events(CodeModeEvent.REFUSED)).toEqual([
      expect.objectContaining({ share: 'server', max: 1, tool: 'execute_code' }),
    ]);
    expect(stoppedWith(await slow)).toBe(CodeModeErrorCode.SCRIPT_TIMEOUT);
    expect(resultOf(await run(kit, 'return 1'))).toBe(1);
  });
});

describe('the sandbox module', () => {
  // A script that grows its heap after an await does so while the host runs its pending jobs. That
  // once left a stray context in the runtime (the binding read its out-parameter through a view of
  // the memory from before it grew), so freeing the runtime aborted the module and the worker had
  // to compile a new one, printing "Assertion failed: list_empty(&rt->gc_obj_list)".
  it('frees every runtime, however a script that grew its heap after an await ends, and is never replaced', async () => {
    // Ten scripts in a row from one caller, two of them spinning for 2 s: more than the default CPU share.
    const k = await start({ cpuMs: 2_000, timeoutMs: 10_000, cpuSharePerCaller: 64 });
    const grow = 'await local.ping(); const kept = []; for (let i = 0; i < 200000; i++) kept.push({ i });';
    for (let round = 0; round < 2; round++) {
      expect(resultOf(await run(k, `${grow} return kept.length;`))).toBe(200_000);
      expect(stoppedWith(await run(k, `${grow} while (true) {}`))).toBe(CodeModeErrorCode.CPU_LIMIT);
      expect(stoppedWith(await run(k, `${grow} for (;;) kept.push({ more: kept.length });`))).toBe(
        CodeModeErrorCode.MEMORY_LIMIT,
      );
      expect(stoppedWith(await run(k, `${grow} throw new Error('after growing');`))).toBe(
        CodeModeErrorCode.SCRIPT_ERROR,
      );
      const caller = new AbortController();
      const cancelled = k.server.call(
        'execute_code',
        { code: `${grow} await local.ping(); while (true) {}` },
        {
          signal: caller.signal,
        },
      );
      setTimeout(() => caller.abort(), 200);
      await cancelled.catch(() => undefined);
    }
    await expect.poll(() => k.logs.events(CodeModeEvent.SCRIPT).length).toBe(10);
    expect(k.logs.events(CodeModeEvent.SCRIPT)).toContainEqual(
      expect.objectContaining({ outcome: CodeModeErrorCode.CANCELLED }),
    );
    expect(k.logs.events(CodeModeEvent.ENGINE_RESET)).toEqual([]);
    await stillServes(k);
  });
});

describe('cancellation', () => {
  it('stops the script when its caller cancels, and cancels the tool calls it has running', async () => {
    let sawAbort = false;
    let started = () => {};
    const waiting = new Promise<void>((resolve) => (started = resolve));
    kit = await createTestKit({
      plugins: [codeMode()],
      tools: [
        {
          name: 'wait',
          handler: (_args: unknown, ctx: { signal: AbortSignal }) =>
            new Promise((resolve) => {
              started();
              ctx.signal.addEventListener('abort', () => {
                sawAbort = true;
                resolve({ content: [{ type: 'text' as const, text: 'aborted' }] });
              });
            }),
        },
      ],
    });
    const caller = new AbortController();
    const running = kit.server.call('execute_code', { code: 'return await local.wait()' }, { signal: caller.signal });
    await waiting;
    caller.abort();
    await running.catch(() => undefined);
    await expect.poll(() => sawAbort).toBe(true);
    expect(kit.logs.events('code_mode.script')).toMatchObject([{ outcome: CodeModeErrorCode.CANCELLED }]);
  });
});

describe('arbitrary scripts', () => {
  it('end in a result or a coded error, and the server keeps serving', async () => {
    const k = await start({ cpuMs: 100, timeoutMs: 500, maxToolCalls: 5 });
    const codes = new Set<string>(Object.values(CodeModeErrorCode));
    const fragment = fc.constantFrom(
      'await local.ping();',
      'while (true) {}',
      'throw new Error("x");',
      'return [1, 2];',
      'callTool(42);',
      'await callTool("ping", [1]);',
      'JSON.parse = () => 1;',
      'Object.prototype.ok = true;',
      '"use strict"; undefinedName;',
      'return { a: 1n };',
      '}); (() => {',
      'const o = {}; o.o = o; return o;',
      '`${',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fragment, fc.string({ maxLength: 20 })), { maxLength: 6 }), async (parts) => {
        const result = await run(k, parts.join('\n'));
        if (result.isError) expect(codes.has(stoppedWith(result) ?? '')).toBe(true);
        else expect(result.structuredContent).toHaveProperty('result');
      }),
      { numRuns: 40 },
    );
    await stillServes(k);
  });
});
