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

/** The tarballs in `dir`, by package name. */
function tarballsIn(dir) {
  const tarballs = new Map();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.tgz'))) {
    const name = file.replace(/^sluice-/, '@sluice/').replace(/-\d+\.\d+\.\d+.*\.tgz$/, '');
    tarballs.set(name, join(dir, file));
  }
  return tarballs;
}

/**
 * Packs all packages into `dest`; returns a map from package name to tarball path. With SLUICE_PACKED naming a
 * folder that `node scripts/pack.mjs <folder>` filled, returns those tarballs instead: .ci/run packs once for
 * check:packages and both consumer scripts, which then run side by side.
 */
export function packAll(dest) {
  const packed = process.env.SLUICE_PACKED;
  if (packed !== undefined && packed !== '') return tarballsIn(packed);
  mkdirSync(dest, { recursive: true });
  run('npx', ['-y', 'pnpm@10', '-r', '--filter', './packages/**', 'pack', '--pack-destination', dest], { cwd: root });
  return tarballsIn(dest);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === undefined) throw new Error('usage: node scripts/pack.mjs <folder>');
  delete process.env.SLUICE_PACKED; // run as a command, it always packs
  process.stdout.write(`packed ${packAll(process.argv[2]).size} packages into ${process.argv[2]}\n`);
}
