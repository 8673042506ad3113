// Shared helpers for the benchmarks: paired A/B runs, percentiles, a table, JSON results.
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Variant {
  readonly name: string;
  /** One operation; awaited. */
  readonly run: () => Promise<unknown>;
}

export interface Stats {
  readonly name: string;
  readonly samples: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
  readonly opsPerSec: number;
}

export interface PairedOptions {
  /** Calls per variant before measuring. */
  readonly warmup?: number;
  /** Rounds; each variant runs `perRound` calls per round, variants alternating. */
  readonly rounds?: number;
  readonly perRound?: number;
}

function percentile(sorted: Float64Array, p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/**
 * Measures the variants in one process, alternating round by round (and
 * rotating who goes first), so that drift in the machine hits all of them.
 */
export async function paired(variants: readonly Variant[], options: PairedOptions = {}): Promise<Stats[]> {
  const warmup = options.warmup ?? 5_000;
  const rounds = options.rounds ?? 20;
  const perRound = options.perRound ?? 1_000;
  for (const v of variants) for (let i = 0; i < warmup; i++) await v.run();
  const samples = variants.map(() => new Float64Array(rounds * perRound));
  const busy = variants.map(() => 0n);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < variants.length; k++) {
      const index = (r + k) % variants.length;
      busy[index]! += await timeRound(variants[index]!.run, perRound, samples[index]!, r * perRound);
    }
  }
  return variants.map((v, i) => summarize(v.name, samples[i]!, busy[i]!));
}

/** Runs `run` `count` times, each call's µs into `out` from `at` on; returns the nanoseconds the round took. */
async function timeRound(run: () => Promise<unknown>, count: number, out: Float64Array, at: number): Promise<bigint> {
  const roundStart = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    const t0 = process.hrtime.bigint();
    await run();
    out[at + i] = Number(process.hrtime.bigint() - t0) / 1_000;
  }
  return process.hrtime.bigint() - roundStart;
}

/** Percentiles, mean and throughput of one variant's samples (µs each), over the time its rounds took. */
function summarize(name: string, samples: Float64Array, busyNs: bigint): Stats {
  const sorted = samples.slice().sort();
  const total = sorted.reduce((a, b) => a + b, 0);
  return {
    name,
    samples: sorted.length,
    p50Us: percentile(sorted, 50),
    p99Us: percentile(sorted, 99),
    meanUs: total / sorted.length,
    opsPerSec: sorted.length / (Number(busyNs) / 1e9),
  };
}

/** A variant that runs in a process of its own: the bench file, forked with `BENCH_VARIANT` set to `key`. */
export interface ProcessVariant {
  readonly name: string;
  readonly key: string;
}

type RoundRequest = { readonly warmup: number } | { readonly perRound: number };
interface RoundReply {
  readonly samples?: number[];
  readonly busyNs?: string;
}

/**
 * `paired`, with each variant in a process of its own, as a deployment runs
 * one kind of server per process: no variant warms up, or makes polymorphic,
 * the SDK code another variant is measured on. Rounds still alternate (one
 * process runs at a time, who goes first rotates), so drift hits them all.
 * `file` is the bench itself; in the child it calls `serveRounds`.
 */
export async function pairedInProcesses(
  file: string,
  variants: readonly ProcessVariant[],
  options: PairedOptions & {
    /** Node's options for the processes; default this process's. */
    readonly execArgv?: readonly string[];
  } = {},
): Promise<Stats[]> {
  const warmup = options.warmup ?? 5_000;
  const rounds = options.rounds ?? 20;
  const perRound = options.perRound ?? 1_000;
  const children = variants.map((v) =>
    fork(file, [], {
      execArgv: [...(options.execArgv ?? process.execArgv)],
      env: { ...process.env, BENCH_VARIANT: v.key },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const ask = (child: ChildProcess, request: RoundRequest) =>
    new Promise<RoundReply>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`a bench variant exited (${code}) mid-run`));
      child.once('exit', exited);
      child.once('message', (reply) => {
        child.off('exit', exited);
        resolve(reply as RoundReply);
      });
      child.send(request);
    });
  try {
    for (const child of children) await ask(child, { warmup });
    const samples = variants.map(() => new Float64Array(rounds * perRound));
    const busy = variants.map(() => 0n);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < variants.length; k++) {
        const index = (r + k) % variants.length;
        const reply = await ask(children[index]!, { perRound });
        samples[index]!.set(reply.samples!, r * perRound);
        busy[index]! += BigInt(reply.busyNs!);
      }
    }
    return variants.map((v, i) => summarize(v.name, samples[i]!, busy[i]!));
  } finally {
    for (const child of children) child.kill();
  }
}

/** The child's half of `pairedInProcesses`: warms up, then times rounds of `run` as the parent asks. */
export function serveRounds(run: () => Promise<unknown>): void {
  process.on('message', (request: RoundRequest) => {
    void (async () => {
      if ('warmup' in request) {
        for (let i = 0; i < request.warmup; i++) await run();
        process.send!({});
        return;
      }
      const samples = new Float64Array(request.perRound);
      const busyNs = await timeRound(run, request.perRound, samples, 0);
      process.send!({ samples: Array.from(samples), busyNs: String(busyNs) });
    })();
  });
  process.on('disconnect', () => process.exit(0));
}

/** Times a synchronous function over many iterations: nanoseconds per call. */
export function nsPerOp(fn: () => unknown, iterations = 1_000_000): number {
  for (let i = 0; i < Math.min(iterations, 100_000); i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - t0) / iterations;
}

export function printTable(title: string, rows: readonly Record<string, string | number>[]): void {
  const keys = Object.keys(rows[0] ?? {});
  const cell = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : v);
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => cell(r[k] ?? '').length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(`\n${title}\n${line(keys)}\n${line(widths.map((w) => '-'.repeat(w)))}\n`);
  for (const r of rows) process.stdout.write(`${line(keys.map((k) => cell(r[k] ?? '')))}\n`);
}

/** Writes a result file under bench/results/. */
export function writeResult(name: string, data: unknown): string {
  const file = join(dirname(fileURLToPath(import.meta.url)), 'results', `${name}.json`);
  mkdirSync(dirname(file), { recursive: true });
  const payload = { name, node: process.version, date: new Date().toISOString(), ...(data as object) };
  writeFileSync(file, `${JSON.stringify(payload, null, 2)}\n`);
  return file;
}

export const ratio = (a: number, b: number): number => Math.round((a / b) * 1000) / 1000;

/** Connects a real SDK client to a server in-process. */
export async function connectInMemory(server: { connect(t: InMemoryTransport): Promise<void> }): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(a);
  return client;
}
