import { afterEach, describe, expect, it } from 'vitest';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { createTestKit, textOf } from '@sluice/testing';
import type { TestKit } from '@sluice/testing';
import { CodeModeErrorCode, CodeModeEvent, codeMode } from '@sluice/plugin-code-mode';
import type { CodeModeOptions } from '@sluice/plugin-code-mode';
import { z } from 'zod';
import { ping, resultOf, stoppedWith } from './helpers.js';

// One builtin call that runs for seconds without reaching QuickJS's interrupt check:
// sorting two million strings. The interrupt handler alone cannot stop it in time.
const HOLD_IN_A_BUILTIN =
  'await local.mark(); const keys = Object.keys(new Uint8Array(2000000)); keys.reverse(); keys.sort(); while (true) {}';

let kit: TestKit | undefined;
let other: Client | undefined;
afterEach(async () => {
  await other?.close();
  await kit?.close();
  other = undefined;
  kit = undefined;
});

/** A kit whose `mark` tool tells when a script has started, and a second client of the same server. */
async function start(limits: CodeModeOptions['limits']) {
  let marked = () => {};
  const started = new Promise<void>((resolve) => (marked = resolve));
  kit = await createTestKit({
    // Room for the two million keys, the copies growing them leaves behind, and the sort's own copy: the module's
    // memory is the heap limit plus a fixed headroom, so a heap this script nearly fills ends it out of memory.
    // A whole core and more for one caller: these scripts run for seconds, past the default CPU share.
    plugins: [codeMode({ limits: { memoryBytes: 256 << 20, cpuSharePerCaller: 64, ...limits } })],
    tools: [ping, { name: 'mark', handler: () => (marked(), { content: [{ type: 'text' as const, text: 'ok' }] }) }],
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await kit.server.connect(serverSide);
  other = new Client({ name: 'another-model', version: '1.0.0' });
  await other.connect(clientSide);
  return { kit, other, started };
}

/** Waits until the script got its `mark` reply and every queued job ran: the script is now in its builtin. */
async function inTheBuiltin(started: Promise<void>): Promise<void> {
  await started;
  await new Promise((resolve) => setImmediate(resolve));
}

describe('a script held inside a builtin', () => {
  it('does not stop the server answering another client, and ends with CPU_LIMIT', async () => {
    const { kit, other, started } = await start({ cpuMs: 200, timeoutMs: 60_000 });
    const hostile = kit.call('execute_code', { code: HOLD_IN_A_BUILTIN });
    await inTheBuiltin(started);

    const answered = await other.callTool({ name: 'ping' });
    expect(textOf(answered)).toBe('pong');
    // The script was still running when the other client got its answer.
    expect(kit.logs.events(CodeModeEvent.SCRIPT)).toEqual([]);

    const result = await hostile;
    expect(stoppedWith(result)).toBe(CodeModeErrorCode.CPU_LIMIT);
    expect(textOf(result)).toContain('ran past its 200 ms of CPU time');
    expect(kit.logs.events(CodeModeEvent.SCRIPT)).toMatchObject([{ outcome: CodeModeErrorCode.CPU_LIMIT }]);
    // The worker that was terminated is replaced: scripts still run.
    expect(resultOf(await kit.call('execute_code', { code: 'return await local.ping()' }))).toBe('pong');
  });

  it('ends with SCRIPT_TIMEOUT at its wall time when its CPU time is larger', async () => {
    const { kit, other, started } = await start({ cpuMs: 60_000, timeoutMs: 1_000 });
    const hostile = kit.call('execute_code', { code: HOLD_IN_A_BUILTIN });
    await inTheBuiltin(started);
    expect(textOf(await other.callTool({ name: 'ping' }))).toBe('pong');
    expect(kit.logs.events(CodeModeEvent.SCRIPT)).toEqual([]);
    expect(stoppedWith(await hostile)).toBe(CodeModeErrorCode.SCRIPT_TIMEOUT);
    expect(resultOf(await kit.call('execute_code', { code: 'return 1' }))).toBe(1);
  });

  it('ends as CANCELLED when its caller cancels, though the worker cannot hear it', async () => {
    const { kit, started } = await start({ cpuMs: 60_000, timeoutMs: 60_000 });
    const caller = new AbortController();
    const running = kit.server.call('execute_code', { code: HOLD_IN_A_BUILTIN }, { signal: caller.signal });
    await inTheBuiltin(started);
    caller.abort();
    await running.catch(() => undefined);
    await expect
      .poll(() => kit.logs.events(CodeModeEvent.SCRIPT))
      .toMatchObject([{ outcome: CodeModeErrorCode.CANCELLED }]);
    expect(resultOf(await kit.call('execute_code', { code: 'return 1' }))).toBe(1);
  });
});

describe('the workers', () => {
  it('run scripts at once up to maxConcurrentScripts, each in its own sandbox', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waiting = 0;
    kit = await createTestKit({
      plugins: [codeMode({ limits: { maxConcurrentScripts: 3, maxScriptsPerCaller: 3 } })],
      tools: [
        {
          name: 'gate',
          handler: async () => {
            if (++waiting === 3) release();
            await gate;
            return { content: [{ type: 'text' as const, text: 'open' }] };
          },
        },
      ],
    });
    const k = kit;
    const results = await Promise.all(
      [1, 2, 3].map((n) =>
        k.call('execute_code', { code: `globalThis.mine = ${n}; await local.gate(); return globalThis.mine;` }),
      ),
    );
    expect(results.map(resultOf)).toEqual([1, 2, 3]);
  });

  it('do not count the time a script waits for its tools as its CPU time', async () => {
    kit = await createTestKit({
      // The CPU time is measured by the wall clock while the script's code runs: a limit well above what its own
      // code takes on a loaded machine (250 ms was seen to run out there).
      plugins: [codeMode({ limits: { cpuMs: 1_000, timeoutMs: 20_000 } })],
      tools: [
        {
          name: 'slow',
          handler: async () => {
            await new Promise((resolve) => setTimeout(resolve, 1_400));
            return { content: [{ type: 'text' as const, text: 'done' }] };
          },
        },
      ],
    });
    // Two waits of 1,400 ms, each past the CPU time plus the grace the main thread allows a worker.
    const script = 'const a = await local.slow(); return [a, await local.slow()];';
    expect(resultOf(await kit.call('execute_code', { code: script }))).toEqual(['done', 'done']);
    expect(kit.logs.events(CodeModeEvent.ENGINE_RESET)).toEqual([]);
  });
});

// A script that makes its calls back to back: the worker waits for each reply awake and the
// main thread takes the next call without its event loop (see POLL_MS and CHAIN_MS in pool.ts).
const BACK_TO_BACK = 'await local.mark(); for (let i = 0; i < 10000; i++) await local.ping(); return "done";';

describe('a script making calls back to back', () => {
  it('lets the main thread turn its event loop while it runs: a timer fires before it ends', async () => {
    const { kit, started } = await start({ maxToolCalls: 100_000, timeoutMs: 60_000, cpuMs: 60_000 });
    const running = kit.call('execute_code', { code: BACK_TO_BACK });
    await started;
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The timer ran while the script was still calling.
    expect(kit.logs.events(CodeModeEvent.SCRIPT)).toEqual([]);
    expect(resultOf(await running)).toBe('done');
    expect(kit.logs.events(CodeModeEvent.SCRIPT)).toMatchObject([{ outcome: 'ok' }]);
  });

  it('lets another client be served while it runs', async () => {
    const { kit, other, started } = await start({ maxToolCalls: 100_000, timeoutMs: 60_000, cpuMs: 60_000 });
    const running = kit.call('execute_code', { code: BACK_TO_BACK });
    await started;
    expect(textOf(await other.callTool({ name: 'ping' }))).toBe('pong');
    expect(kit.logs.events(CodeModeEvent.SCRIPT)).toEqual([]);
    expect(resultOf(await running)).toBe('done');
  });

  it('ends as CANCELLED when its caller cancels, and no reply it left answers the next script on its worker', async () => {
    const { kit, started } = await start({ maxToolCalls: 100_000, timeoutMs: 60_000, cpuMs: 60_000 });
    const caller = new AbortController();
    const running = kit.server.call(
      'execute_code',
      { code: 'await local.mark(); for (;;) await local.ping();' },
      { signal: caller.signal },
    );
    await started;
    caller.abort();
    await running.catch(() => undefined);
    await expect
      .poll(() => kit.logs.events(CodeModeEvent.SCRIPT))
      .toMatchObject([{ outcome: CodeModeErrorCode.CANCELLED }]);
    expect(resultOf(await kit.call('execute_code', { code: 'return await local.ping()' }))).toBe('pong');
  });
});

describe('replies while the worker and the main thread switch between waiting awake and asleep', () => {
  it('each reach the call they answer, with fast and slow tools mixed, one by one and together', async () => {
    const echo = (n: number) => ({ content: [{ type: 'text' as const, text: String(n) }] });
    kit = await createTestKit({
      plugins: [codeMode({ limits: { maxToolCalls: 1_000 } })],
      tools: [
        { name: 'fast', inputSchema: z.object({ n: z.number() }), handler: ({ n }: { n: number }) => echo(n) },
        {
          name: 'slow',
          inputSchema: z.object({ n: z.number() }),
          handler: async ({ n }: { n: number }) => {
            await new Promise((resolve) => setTimeout(resolve, 2));
            return echo(n);
          },
        },
      ],
    });
    const code = `
      const one = (i) => (i % 3 === 0 ? local.slow({ n: i }) : local.fast({ n: i }));
      const out = [];
      for (let i = 0; i < 60; i++) out.push(await one(i));
      for (let i = 60; i < 120; i += 10) out.push(...(await Promise.all([...Array(10).keys()].map((k) => one(i + k)))));
      return out.join(',');`;
    const expected = Array.from({ length: 120 }, (_, i) => i).join(',');
    expect(resultOf(await kit.call('execute_code', { code }))).toBe(expected);
    expect(resultOf(await kit.call('execute_code', { code }))).toBe(expected);
  });
});
