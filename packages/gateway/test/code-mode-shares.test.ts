// Issue 30, item 3, attacked over loopback against `sluice serve`: code-mode script slots and memory are shared
// fairly. One key's scripts that wait hold only that key's share; a script that awaits what can never settle ends at
// once; typed arrays stay within the heap limit plus the module's headroom; idle workers give their memory back.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { errorOf, textOf } from '@sluice/testing';
import { call, eventually, fixtureUpstream, httpClient, serve } from './helpers.js';
import type { Served } from './helpers.js';

const ATTACKER = 'attacker-key-0123456789abcdef';
const VICTIM = 'victim-key-0123456789abcdef';
const OTHER = 'other-key-0123456789abcdef';
const SCRAPER = 'scraper-key-0123456789abcdef';

let served: Served | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  await served?.stop();
  served = undefined;
});

async function gateway(limits: Record<string, unknown> = {}): Promise<Served> {
  served = await serve({
    listen: {
      http: {
        port: 0,
        auth: {
          type: 'apiKeys',
          keys: [
            { name: 'attacker', key: ATTACKER },
            { name: 'victim', key: VICTIM },
            { name: 'other', key: OTHER },
            { name: 'prometheus', key: SCRAPER, scopes: ['sluice:metrics'] },
          ],
        },
      },
    },
    upstreams: [fixtureUpstream('fx')],
    // The defaults (four scripts at once, a 64 MiB heap, 30 s of wall time), unless a test sets a limit.
    plugins: { codeMode: { limits } },
  });
  return served;
}

async function client(url: URL, key: string): Promise<Client> {
  const connected = await httpClient(url, { authorization: `Bearer ${key}` });
  clients.push(connected);
  return connected;
}

const script = (c: Client, code: string) => call(c, 'execute_code', { code });

const returned = (result: CallToolResult): unknown => {
  expect(result.isError, textOf(result)).toBeFalsy();
  return (result.structuredContent as { result: unknown }).result;
};

/** The resident memory of the gateway process, in bytes. */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) * 1024;
}

describe('code-mode script slots are per caller', () => {
  it("four waiting scripts of one key take only that key's share; another key's script runs", async () => {
    const { url } = await gateway();
    const attacker = await client(url, ATTACKER);
    const victim = await client(url, VICTIM);
    const outcomes: CallToolResult[] = [];
    const attacks = Array.from({ length: 4 }, () =>
      script(attacker, 'return await fx.hold();').then((result) => outcomes.push(result)),
    );
    // Every attacking script either holds a slot (its call waits in hold) or was refused.
    await eventually(async () => {
      const held = Number(textOf(await call(victim, 'fx_held')));
      return held + outcomes.length === 4;
    }, 'the attacking scripts to take their slots');
    expect(outcomes.map((o) => errorOf(o)?.code)).toEqual(['SCRIPTS_BUSY', 'SCRIPTS_BUSY']);
    expect(textOf(outcomes[0]!)).toContain('as many as one caller may run at once');

    expect(returned(await script(victim, "return await fx.echo({ text: 'served' });"))).toBe('served');
    // The shares and the refusals, in /metrics.
    const metrics = await (
      await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${SCRAPER}` } })
    ).text();
    expect(metrics).toContain('sluice_code_mode_scripts 2');
    expect(metrics).toContain('sluice_code_mode_script_share_limit{share="server"} 4');
    expect(metrics).toContain('sluice_code_mode_script_share_limit{share="caller"} 2');
    expect(metrics).toContain('sluice_code_mode_script_refusals_total{share="caller"} 2');
    await call(victim, 'fx_release');
    await Promise.all(attacks);
    expect(outcomes.slice(2).map((o) => returned(o))).toEqual(['released', 'released']);
  });

  it('a script that awaits a promise that never settles is stopped at once, and holds no slot', async () => {
    const { url } = await gateway();
    const attacker = await client(url, ATTACKER);
    const other = await client(url, OTHER);
    const victim = await client(url, VICTIM);
    const stalled = await Promise.all([
      script(attacker, 'await new Promise(() => {});'),
      script(attacker, 'await new Promise(() => {});'),
      script(other, 'await fx.echo({ text: "x" }); await new Promise(() => {});'),
      script(other, 'await new Promise(() => {});'),
    ]);
    expect(stalled.map((r) => errorOf(r)?.code)).toEqual([
      'SCRIPT_STALLED',
      'SCRIPT_STALLED',
      'SCRIPT_STALLED',
      'SCRIPT_STALLED',
    ]);
    expect(returned(await script(victim, 'return 42;'))).toBe(42);
  });
});

describe('code-mode CPU is shared per caller', () => {
  /**
   * One key starts `code` from both its slots, each as soon as its last one ended, until it was refused for CPU 20
   * times (at most 300 tries); meanwhile another key runs scripts one after another (`victim: 'throughout'`), or
   * one once the attacker was first refused (`'once'`, for a share too small for more). What the attacker's scripts
   * were charged (the audit lines' `chargedMs`) must stay within its share over the attack, plus its bank and what
   * the two scripts it had running when its account ran dry could spend past it.
   */
  async function attackAndServe(code: string, share: number, victimRuns: 'throughout' | 'once') {
    const { url, run } = served!;
    const attacker = await client(url, ATTACKER);
    const victim = await client(url, VICTIM);
    const bankMs = share * 4_000;
    let refusedForCpu: CallToolResult | undefined;
    let cpuRefusals = 0;
    let attempts = 0;
    let victimScripts = 0;
    const victimAnswers: unknown[] = [];
    const attacking = () => cpuRefusals < 20 && attempts < 300;
    let firstRefusal = () => {};
    const refused = new Promise<void>((resolve) => (firstRefusal = resolve));
    const began = performance.now();
    const attack = async () => {
      while (attacking()) {
        attempts++;
        const result = await script(attacker, code);
        const error = errorOf(result);
        if (error?.code === 'SCRIPTS_BUSY' && error.share === 'cpu') {
          refusedForCpu ??= result;
          cpuRefusals++;
          firstRefusal();
        } else expect(error?.code).toBe('SCRIPT_STALLED');
      }
    };
    const serveVictim = async () => {
      if (victimRuns === 'once') await Promise.race([refused, attacks]);
      while (victimRuns === 'once' ? victimScripts === 0 : attacking()) {
        victimScripts++;
        const result = await script(victim, `return await fx.echo({ text: 'v${victimScripts}' });`);
        victimAnswers.push(result.isError ? textOf(result) : returned(result));
      }
    };
    const attacks = Promise.all([attack(), attack()]);
    await Promise.all([attacks, serveVictim()]);
    const elapsedMs = performance.now() - began;

    expect(refusedForCpu, `no refusal for CPU in ${attempts} scripts`).toBeDefined();
    expect(errorOf(refusedForCpu!)?.retryAfterMs).toBeGreaterThan(0);
    expect(textOf(refusedForCpu!)).toContain('more CPU than your share');
    // Every script of the other key ran while the attacker was held to its share.
    expect(victimAnswers).toEqual(Array.from({ length: victimScripts }, (_, i) => `v${i + 1}`));
    const charged = run
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"code_mode.script"') && line.includes('"caller":"attacker"'))
      .map((line) => (JSON.parse(line) as { chargedMs: number }).chargedMs);
    expect(charged.length).toBeGreaterThan(0);
    const total = charged.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(bankMs + share * elapsedMs + 2 * Math.max(...charged));
    return { url };
  }

  it("at the defaults, one key's scripts that compute a little, then stall, get a quarter of a core; another key's run", async () => {
    await gateway();
    const { url } = await attackAndServe(
      'for (let i = 0; i < 1000000; i++) {} await new Promise(() => {});',
      0.25,
      'throughout',
    );
    const metrics = await (
      await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${SCRAPER}` } })
    ).text();
    expect(metrics).toContain('sluice_code_mode_cpu_share 0.25');
    expect(metrics).toMatch(/sluice_code_mode_script_refusals_total\{share="cpu"\} [1-9]/);
    expect(metrics).toMatch(/sluice_code_mode_cpu_seconds_total [1-9]/);
  });

  it("one key starting stalling scripts in a loop gets its configured share, interpreter set-up included; another key's run", async () => {
    await gateway({ cpuSharePerCaller: 0.02 });
    await attackAndServe('await new Promise(() => {});', 0.02, 'once');
  });
});

describe('code-mode memory is bounded by the heap limit and given back', () => {
  it('typed arrays stop at the heap limit plus the headroom, and the workers of finished scripts end', async () => {
    const { url, run } = await gateway();
    const pid = run.child.pid!;
    const attacker = await client(url, ATTACKER);
    const other = await client(url, OTHER);
    expect(returned(await script(attacker, 'return 1;'))).toBe(1);
    const before = rss(pid);
    const hog =
      'const all = []; try { for (;;) all.push(new Uint8Array(1 << 20)); } catch (e) { return [all.length, String(e)]; }';
    const results = await Promise.all([
      script(attacker, hog),
      script(attacker, hog),
      script(other, hog),
      script(other, hog),
    ]);
    // The documented bound: the 64 MiB heap limit plus the module's 16 MiB headroom.
    const limitMiB = 64 + 16;
    for (const result of results) {
      const [mebibytes, error] = returned(result) as [number, string];
      expect(error).toMatch(/out of memory/);
      // The old module memory (six times the heap, plus 32 MiB) let one script hold 408 MiB here.
      expect(mebibytes).toBeLessThanOrEqual(limitMiB);
    }
    // Of the four workers, the spares end once idle, and their memory goes with them: one warm worker is left.
    await eventually(
      () => rss(pid) < before + (limitMiB + 48) * (1 << 20),
      'the idle workers to give memory back',
      20_000,
    );
  });
});
