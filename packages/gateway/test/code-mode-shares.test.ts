// Issue 30, item 3, attacked over loopback against `sluice serve`: code-mode script slots and memory are shared
// fairly. One key's scripts that wait hold only that key's share; a script that awaits what can never settle ends at
// once; typed arrays stay within the heap limit plus the module's headroom; idle workers give their memory back.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { errorOf, textOf } from '@sluice/core/testing';
import { call, eventually, fixtureUpstream, httpClient, serve } from './helpers.js';
import type { Served } from './helpers.js';

const ATTACKER = 'attacker-key-0123456789abcdef';
const VICTIM = 'victim-key-0123456789abcdef';
const OTHER = 'other-key-0123456789abcdef';

let served: Served | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  await served?.stop();
  served = undefined;
});

async function gateway(): Promise<Served> {
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
          ],
        },
      },
    },
    upstreams: [fixtureUpstream('fx')],
    // The defaults: four scripts at once, a 64 MiB heap, 30 s of wall time.
    plugins: { codeMode: {} },
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
      await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${VICTIM}` } })
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
