// Issue 30's attackers mixed into normal load against `sluice serve` with API keys and code mode: silent sockets
// reopened every 20 ms, one key holding listen streams, endless unauthenticated chunked uploads, key guessers from
// rotating addresses, and one key's scripts that spin, stall or wait. Normal workers (SDK clients with their own key,
// one reconnecting for every call, one running scripts) check every answer exactly. The same load runs quiet and
// under attack, in windows that alternate SLUICE_SHARES_SOAK_ROUNDS times (default 1: quiet, then attacked); each
// phase lasts SLUICE_SHARES_SOAK_SECONDS in all (default 3). Both phases' p50 are printed, never asserted. After
// GC, the heap must not have grown beyond a bound.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, call, eventually, fixtureUpstream, httpClient, serve } from './helpers.js';
import type { Served } from './helpers.js';

const SECONDS = Number(process.env.SLUICE_SHARES_SOAK_SECONDS ?? 3);
/** Quiet and attacked windows alternate this many times, so that a drift of the machine falls on both alike. */
const ROUNDS = Math.max(1, Math.floor(Number(process.env.SLUICE_SHARES_SOAK_ROUNDS ?? 1)));
const MAX_CONNECTIONS = 128;
/** Strong, so that the guessers at its address cannot keep it out (see the guess throttle). */
const NORMAL_KEY = randomBytes(32).toString('hex');
const ATTACKER_KEY = randomBytes(32).toString('hex');
/** Heap growth allowed after GC: the attacks move hundreds of megabytes, a leak of them would show far above this. */
const HEAP_BOUND_BYTES = 24 * 1024 * 1024;
const GC_PRELOAD = fileURLToPath(new URL('./fixtures/gc-on-signal.mjs', import.meta.url));
const ATTACKER = fileURLToPath(new URL('./fixtures/attack.ts', import.meta.url));

const textOf = (result: { content?: unknown }): string =>
  ((result.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');

/**
 * Lowers every thread of process `pid` to nice 19 (Linux lists them in /proc/<pid>/task and sets each one's
 * priority by its id; threads it starts later inherit it); elsewhere its main thread.
 */
function lowestPriority(pid: number): void {
  let threads = [pid];
  try {
    threads = readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    // Not Linux: the process's priority is its main thread's.
  }
  for (const thread of threads) {
    try {
      setPriority(thread, 19);
    } catch {
      // The thread ended meanwhile.
    }
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

interface Phase {
  calls: number;
  wrong: string[];
  /** Latencies of the keep-alive workers' calls, in ms. */
  latencies: number[];
}

describe(`a soak of ${SECONDS} s quiet, then ${SECONDS} s with every attacker of issue 30`, () => {
  let gw: Served;
  const clients: Client[] = [];

  beforeAll(async () => {
    gw = await serve(
      {
        listen: {
          http: {
            port: 0,
            maxConnections: MAX_CONNECTIONS,
            auth: {
              type: 'apiKeys',
              keys: [
                { name: 'normal', key: NORMAL_KEY },
                { name: 'attacker', key: ATTACKER_KEY },
              ],
            },
          },
        },
        upstreams: [fixtureUpstream('fx')],
        plugins: { codeMode: {} },
      },
      { NODE_OPTIONS: `--max-old-space-size=96 --expose-gc --import=${GC_PRELOAD}` },
    );
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await gw.stop();
  });

  const connect = async (key: string, headers: Record<string, string> = {}): Promise<Client> => {
    const client = await httpClient(gw.url, { authorization: `Bearer ${key}`, ...headers });
    clients.push(client);
    return client;
  };

  /** The gateway's heap right after a full GC, read from the line the preload logs. */
  const heapAfterGc = async (): Promise<number> => {
    const lines = () =>
      gw.run
        .stderr()
        .split('\n')
        .filter((l) => l.includes('"test.gc"'));
    const before = lines().length;
    gw.run.child.kill('SIGUSR2');
    await eventually(() => lines().length > before, 'the gateway to collect garbage');
    return (JSON.parse(lines().at(-1)!) as { heapUsed: number }).heapUsed;
  };

  /** The normal load for `ms` once connected: three keep-alive workers, one reconnecting for each call, one running scripts. */
  async function normalLoad(ms: number): Promise<Phase> {
    const phase: Phase = { calls: 0, wrong: [], latencies: [] };
    const keepAlive = await Promise.all(
      [0, 1, 2].map(() =>
        connect(NORMAL_KEY).catch((error: unknown) => {
          throw new Error(`a normal client could not connect: ${String(error)}`);
        }),
      ),
    );
    const scripts = await connect(NORMAL_KEY).catch((error: unknown) => {
      throw new Error(`a normal client could not connect: ${String(error)}`);
    });
    const until = Date.now() + ms;
    const check = (got: string, expected: string) => {
      phase.calls++;
      if (got !== expected) phase.wrong.push(`${expected} -> ${got.slice(0, 200)}`);
    };
    const failed = (error: unknown) => `ERROR ${String(error)}`;
    const workers = [
      ...keepAlive.map(async (client, w) => {
        for (let n = 0; Date.now() < until; n++) {
          const text = `w${w} call ${n}`;
          const start = performance.now();
          const got = await call(client, 'fx_echo', { text }).then(textOf, failed);
          phase.latencies.push(performance.now() - start);
          check(got, text);
        }
      }),
      (async () => {
        for (let n = 0; Date.now() < until; n++) {
          const text = `fresh connection ${n}`;
          const got = await (async () => {
            const client = await httpClient(gw.url, { authorization: `Bearer ${NORMAL_KEY}`, connection: 'close' });
            try {
              return textOf(await call(client, 'fx_echo', { text }));
            } finally {
              await client.close().catch(() => {});
            }
          })().catch(failed);
          check(got, text);
        }
      })(),
      (async () => {
        for (let n = 0; Date.now() < until; n++) {
          const text = `script ${n}`;
          const got = await call(scripts, 'execute_code', { code: `return await fx.echo({ text: '${text}' });` }).then(
            (r) => JSON.stringify((r.structuredContent as { result?: unknown } | undefined)?.result ?? textOf(r)),
            failed,
          );
          check(got, JSON.stringify(text));
        }
      })(),
    ];
    await Promise.all(workers);
    for (const client of [...keepAlive, scripts]) await client.close().catch(() => {});
    return phase;
  }

  /**
   * Every attacker of issue 30, from a process of its own, in rounds: `go()` starts them all, `halt()` stops them and
   * answers the attacks made in the round. Once loaded, every thread of the process runs at the lowest CPU priority:
   * attackers on other machines would not take this machine's CPU from the gateway and the normal clients, only the
   * gateway's work for them should. It loads at the test's own priority, so that a busy machine does not starve it.
   */
  async function attackers(): Promise<{
    go: () => Promise<void>;
    halt: () => Promise<number>;
    end: () => Promise<void>;
  }> {
    const child = spawn(process.execPath, ['--conditions=sluice:source', '--import', 'tsx', ATTACKER], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ATTACK_URL: gw.url.href,
        ATTACK_KEY: ATTACKER_KEY,
        ATTACK_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const answers = () => out.split('\n').slice(0, -1);
    /** The next line the process answers, or its end: the process is killed if it does not answer in time. */
    const answer = async (what: string, timeoutMs?: number): Promise<string> => {
      const before = answers().length;
      await eventually(() => answers().length > before || child.exitCode !== null, what, timeoutMs).catch(
        (error: unknown) => {
          child.kill('SIGKILL');
          throw error;
        },
      );
      const line = answers()[before];
      if (line === undefined) throw new Error(`the attackers' process ended before ${what}`);
      return line;
    };
    // Loaded before any window is measured: compiling the attackers takes CPU.
    expect(await answer('the attackers to load', 60_000)).toBe('ready');
    lowestPriority(child.pid!);
    return {
      go: async () => {
        child.stdin.write('go\n');
        // Attackers that never start are ended here, not left running past the test.
        // At the lowest priority on a machine whose every core is busy, the attackers' process gets little CPU.
        expect(await answer('the attackers to start', 120_000)).toBe('attacking');
      },
      halt: async () => {
        child.stdin.write('halt\n');
        return (JSON.parse(await answer('the attackers to halt', 120_000)) as { attempts: number }).attempts;
      },
      end: async () => {
        child.stdin.end();
        await exited;
      },
    };
  }

  it(
    'answers every normal call correctly under attack, and keeps the heap flat',
    async () => {
      const windowMs = (SECONDS * 1000) / ROUNDS;
      const quiet: Phase[] = [];
      const attacked: Phase[] = [];
      let attacks = 0;
      let heapBefore = 0;
      const attack = await attackers();
      try {
        // Warm, so that the first quiet window is not slowed by what the gateway compiles and caches on first use.
        await normalLoad(Math.max(1_000, windowMs));
        for (let round = 0; round < ROUNDS; round++) {
          quiet.push(await normalLoad(windowMs));
          if (round === 0) heapBefore = await heapAfterGc();
          await attack.go();
          attacked.push(await normalLoad(windowMs));
          attacks += await attack.halt();
        }
      } finally {
        await attack.end();
      }
      const heapAfter = await heapAfterGc();

      const all = (phases: Phase[]) => ({
        calls: phases.reduce((n, p) => n + p.calls, 0),
        wrong: phases.flatMap((p) => p.wrong),
        latencies: phases.flatMap((p) => p.latencies),
      });
      const q = all(quiet);
      const a = all(attacked);
      const p50 = { quiet: percentile(q.latencies, 50), attacked: percentile(a.latencies, 50) };
      const numbers = {
        seconds: SECONDS,
        rounds: ROUNDS,
        quietCalls: q.calls,
        attackedCalls: a.calls,
        wrong: q.wrong.length + a.wrong.length,
        attacks,
        p50QuietMs: +p50.quiet.toFixed(2),
        p50AttackedMs: +p50.attacked.toFixed(2),
        p50Ratio: +(p50.attacked / p50.quiet).toFixed(2),
        p50MsPerRound: quiet.map((phase, i) => [
          +percentile(phase.latencies, 50).toFixed(2),
          +percentile(attacked[i]!.latencies, 50).toFixed(2),
        ]),
        p99AttackedMs: +percentile(a.latencies, 99).toFixed(2),
        heapBeforeMiB: +(heapBefore / 2 ** 20).toFixed(1),
        heapAfterMiB: +(heapAfter / 2 ** 20).toFixed(1),
      };
      console.info(`shares soak: ${JSON.stringify(numbers)}`);
      expect(gw.run.child.exitCode, gw.run.stderr().slice(-2_000)).toBeNull();
      expect(q.wrong, q.wrong.slice(0, 3).join('\n')).toEqual([]);
      expect(a.wrong, a.wrong.slice(0, 3).join('\n')).toEqual([]);
      for (const phase of attacked) expect(phase.calls).toBeGreaterThan(0);
      expect(attacks).toBeGreaterThan(0);
      expect(heapAfter - heapBefore).toBeLessThan(HEAP_BOUND_BYTES);
    },
    (4 * SECONDS + 240 * ROUNDS + 60) * 1000,
  );
});
