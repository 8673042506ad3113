// Cold import, whole process: how long `node` takes to start and import (a) the
// v1 SDK's McpServer alone, against (b) what docs/adopting-one-guard.md imports
// to adopt one guard (the v1 SDK, zod, @sluice/core, @sluice/plugin-concurrency).
// (c) is bare `node`, for scale. Each run is a fresh process on the built
// packages (dist/, no TypeScript loader); variants alternate, medians compared.
// Goal: b/a within 1.2, in wall time. Each process also reports the CPU time it
// used (all its threads), which other load on a shared machine barely moves.
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable, ratio, writeResult } from './lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const runs = Number(process.env.COLD_IMPORT_RUNS ?? 15);

const variants = {
  'a: v1 SDK alone': `await import('@modelcontextprotocol/sdk/server/mcp.js');`,
  'b: adopt one guard': [
    `await import('@modelcontextprotocol/sdk/server/mcp.js');`,
    `await import('zod');`,
    `await import('@sluice/core');`,
    `await import('@sluice/plugin-concurrency');`,
  ].join(' '),
  'c: bare node': ``,
} as const;
type Name = keyof typeof variants;

/** Reports, on stdout, the CPU time the process has used so far, in ms. */
const REPORT_CPU = `const u = process.cpuUsage(); process.stdout.write(String((u.user + u.system) / 1000));`;

function once(source: string): { wall: number; cpu: number } {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', `${source} ${REPORT_CPU}`], {
    cwd: here,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0) throw new Error(`cold import failed: ${source}`);
  return { wall, cpu: Number(run.stdout) };
}

const samples = new Map<Name, number[]>(Object.keys(variants).map((name) => [name as Name, []]));
const cpuSamples = new Map<Name, number[]>(Object.keys(variants).map((name) => [name as Name, []]));
const names = Object.keys(variants) as Name[];
for (let round = 0; round < runs; round++) {
  // Rotate who goes first, so that drift in the machine hits every variant alike.
  for (let i = 0; i < names.length; i++) {
    const name = names[(round + i) % names.length]!;
    const { wall, cpu } = once(variants[name]);
    samples.get(name)!.push(wall);
    cpuSamples.get(name)!.push(cpu);
  }
}
const median = (values: number[]): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const stats = names.map((name) => ({
  name,
  runs,
  'median ms': Math.round(median(samples.get(name)!)),
  'median CPU ms': Math.round(median(cpuSamples.get(name)!)),
}));
printTable('Cold import (whole process, median of fresh processes)', stats);
const a = median(samples.get('a: v1 SDK alone')!);
const b = median(samples.get('b: adopt one guard')!);
const c = median(samples.get('c: bare node')!);
const cpuA = median(cpuSamples.get('a: v1 SDK alone')!);
const cpuB = median(cpuSamples.get('b: adopt one guard')!);
const ratios = { 'b/a': ratio(b, a), '(b-c)/(a-c)': ratio(b - c, a - c), 'b/a CPU': ratio(cpuB, cpuA) };
printTable('Ratios (goal: b/a within 1.2)', [ratios]);
writeResult('cold-import', { stats, ratios, goals: { 'b/a': 1.2 } });
