import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Revision = '2025-11-25' | '2026-07-28';

export interface SuiteRun {
  /** The CLI's exit code: 0 when every failure is in the baseline and no entry is stale. */
  readonly code: number | null;
  /** The summary the CLI printed (pass/fail per scenario, unexpected and stale entries). */
  readonly summary: string;
  readonly seconds: number;
}

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
);
const node20Shim = join(here, '..', 'node20', 'register.mjs');

/** The baseline file of one target (`server`, `gateway`) at one revision. */
export function baselineOf(target: string, revision: Revision): string {
  return join(here, '..', 'baselines', `${target}-${revision}.yml`);
}

/**
 * Runs the official conformance CLI against a server URL, as a child process,
 * for exactly the scenarios `revision` requires, judged against a baseline.
 */
export async function runConformance(
  url: URL,
  revision: Revision,
  baseline: string,
  timeoutMs = 240_000,
): Promise<SuiteRun> {
  const cwd = await mkdtemp(join(tmpdir(), 'sluice-conformance-'));
  const started = performance.now();
  const args = [
    '--import',
    node20Shim,
    cli,
    'server',
    '--url',
    url.href,
    '--requirements',
    revision,
    '--expected-failures',
    baseline,
  ];
  try {
    const child = spawn(process.execPath, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    }).finally(() => clearTimeout(timer));
    const at = output.indexOf('=== SUMMARY ===');
    return {
      code,
      summary: at === -1 ? output.slice(-4000) : output.slice(at),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}
