// Shared helpers for the benchmarks: paired A/B runs, percentiles, a table, JSON results.
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
      const v = variants[index]!;
      const out = samples[index]!;
      const roundStart = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) {
        const t0 = process.hrtime.bigint();
        await v.run();
        out[r * perRound + i] = Number(process.hrtime.bigint() - t0) / 1_000;
      }
      busy[index]! += process.hrtime.bigint() - roundStart;
    }
  }
  return variants.map((v, i) => {
    const sorted = samples[i]!.slice().sort();
    const total = sorted.reduce((a, b) => a + b, 0);
    return {
      name: v.name,
      samples: sorted.length,
      p50Us: percentile(sorted, 50),
      p99Us: percentile(sorted, 99),
      meanUs: total / sorted.length,
      opsPerSec: sorted.length / (Number(busy[i]!) / 1e9),
    };
  });
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
