// Before and after, in one run: the tool path (bench/core.bench.ts in memory, bench/gateway.bench.ts over loopback
// HTTP) and the cost of a guarded resources/read (bench/features.bench.ts), measured on a baseline (a git worktree
// of BENCH_BASE, default `main`, built in this run) and on this checkout, with the same bench scripts (this
// checkout's, copied into the baseline), each bench run on both trees back to back, so that both meet the same load.
//
// Run from the repository root: node --import tsx bench/before-after.ts (BENCH_QUICK=0 for the long settings;
// BENCH_SKIP_BUILD=1 when this checkout is built already). It prints every ratio before, after and after/before,
// and writes bench/results/before-after.json. The numbers say what they say on the machine they ran on: with the
// load average printed beside them; on a loaded machine read them as loaded, not as goals met.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable, writeResult } from './lib.js';

const head = dirname(dirname(fileURLToPath(import.meta.url)));
const base = process.env.BENCH_BASE ?? 'main';
const quick = process.env.BENCH_QUICK !== '0';
const BENCHES = ['core', 'gateway', 'features'] as const;
/** The measurement code both trees run: this checkout's. */
const SHARED = ['lib.ts', ...BENCHES.map((b) => `${b}.bench.ts`)];

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
const pnpm = (cwd: string, ...args: string[]): void => {
  const run = spawnSync('npx', ['-y', 'pnpm@10', ...args], { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (run.status !== 0) throw new Error(`pnpm ${args.join(' ')} failed in ${cwd}`);
};

const baseCommit = git(head, 'rev-parse', base);
const headCommit = git(head, 'rev-parse', 'HEAD');
const dirty = git(head, 'status', '--porcelain', '--untracked-files=no') !== '';
const tree = mkdtempSync(join(tmpdir(), 'sluice-bench-base-'));
process.stdout.write(`baseline ${base} (${baseCommit.slice(0, 10)}) in ${tree}\n`);
git(head, 'worktree', 'add', '--detach', tree, baseCommit);

type Result = { ratios: Record<string, number> };
const measured: Record<string, { before: Result; after: Result }> = {};
const load = { start: loadavg(), end: [] as number[] };
try {
  pnpm(tree, 'install', '--frozen-lockfile', '--offline');
  pnpm(tree, 'build');
  if (process.env.BENCH_SKIP_BUILD !== '1') pnpm(head, 'build');
  for (const file of SHARED) copyFileSync(join(head, 'bench', file), join(tree, 'bench', file));
  for (const bench of BENCHES) {
    const before = runBench(tree, bench);
    const after = runBench(head, bench);
    measured[bench] = { before, after };
  }
  load.end = loadavg();
  report();
} finally {
  git(head, 'worktree', 'remove', '--force', tree);
  if (existsSync(tree)) rmSync(tree, { recursive: true, force: true });
}

/** Runs one bench in one tree, in a process of its own, and reads back the result it wrote. */
function runBench(root: string, bench: string): Result {
  process.stdout.write(`\n=== ${bench} on ${root === head ? 'this checkout (after)' : `${base} (before)`} ===\n`);
  const run = spawnSync(
    process.execPath, // As run.ts runs every bench: sources through tsx where a bench imports them, core.bench's variants built.
    ['--expose-gc', '--conditions=sluice:source', '--import', 'tsx', join(root, 'bench', `${bench}.bench.ts`)],
    {
      cwd: join(root, 'bench'),
      stdio: 'inherit',
      env: { ...process.env, BENCH_QUICK: quick ? '1' : '0' },
    },
  );
  if (run.status !== 0) throw new Error(`${bench}.bench.ts failed in ${root}`);
  return JSON.parse(readFileSync(join(root, 'bench', 'results', `${bench}.json`), 'utf8')) as Result;
}

function report(): void {
  const rows = Object.entries(measured).flatMap(([bench, { before, after }]) =>
    Object.keys(after.ratios)
      .filter((key) => typeof before.ratios[key] === 'number' && !key.includes(' µs'))
      .map((key) => ({
        bench,
        ratio: key,
        before: before.ratios[key] as number,
        after: after.ratios[key] as number,
        'after/before': Math.round(((after.ratios[key] as number) / (before.ratios[key] as number)) * 1000) / 1000,
      })),
  );
  const loadText = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  printTable(
    `Before (${base} ${baseCommit.slice(0, 10)}) and after (${headCommit.slice(0, 10)}${dirty ? ', uncommitted changes' : ''}), ` +
      `${quick ? 'quick' : 'long'} settings; load average ${loadText(load.start)} at start, ${loadText(load.end)} at end: ` +
      'a loaded machine, so read the ratios side by side, not as goals',
    rows,
  );
  const features = measured.features;
  if (features !== undefined) {
    const cost = (r: Result) => ({
      'guarded read / unguarded read, p50': r.ratios['read g/c p50'] ?? Number.NaN,
      'guarded read - unguarded read, p50 µs': r.ratios['guarded read cost p50 µs'] ?? Number.NaN,
    });
    printTable('The cost of a guarded resources/read (concurrency guard) over the same read unguarded', [
      { tree: `before (${base})`, ...cost(features.before) },
      { tree: 'after', ...cost(features.after) },
    ]);
  }
  const file = writeResult('before-after', { base, baseCommit, headCommit, dirty, quick, load, rows, measured });
  process.stdout.write(`\nwritten to ${file}\n`);
}
