// Writes src/version.ts in every package from its package.json, so the
// version is a plain constant at run time: no package.json read, which
// bundlers cannot follow. Runs before every build; `--check` only reports.
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The text of a package's version.ts. */
export function versionSource(name, version) {
  return [
    `// Written by scripts/versions.mjs from package.json at build time; do not edit.`,
    '',
    `/** The version of ${name}. */`,
    `export const VERSION = '${version}';`,
    '',
  ].join('\n');
}

/** Writes (or with `check`, only compares) one package's src/version.ts; true when it was stale. */
export function writeVersion(packageDir, { check = false } = {}) {
  const { name, version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const file = join(packageDir, 'src', 'version.ts');
  const wanted = versionSource(name, version);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (current === wanted) return false;
  if (check) process.stderr.write(`${file} does not say ${name}@${version}: run node scripts/versions.mjs\n`);
  else writeFileSync(file, wanted);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const dir of readdirSync(join(root, 'packages'))) {
    const packageDir = join(root, 'packages', dir);
    if (existsSync(join(packageDir, 'package.json')) && writeVersion(packageDir, { check })) stale++;
  }
  if (check && stale > 0) process.exitCode = 1;
}
