// Packs every package under packages/ with pnpm (which rewrites `workspace:`
// and `catalog:` ranges as a publish would) into a folder; returns the tarballs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs a command; throws with its output when it fails. */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** Packs all packages into `dest`; returns a map from package name to tarball path. */
export function packAll(dest) {
  mkdirSync(dest, { recursive: true });
  run('npx', ['-y', 'pnpm@10', '-r', '--filter', './packages/**', 'pack', '--pack-destination', dest], { cwd: root });
  const tarballs = new Map();
  for (const file of readdirSync(dest).filter((f) => f.endsWith('.tgz'))) {
    const name = file.replace(/^sluice-/, '@sluice/').replace(/-\d+\.\d+\.\d+.*\.tgz$/, '');
    tarballs.set(name, join(dest, file));
  }
  return tarballs;
}
