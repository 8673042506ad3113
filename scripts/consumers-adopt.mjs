// What adopting one guard costs a v1 SDK server, installed as a user would: packs the packages, installs
// with npm into throwaway projects outside the workspace, and runs a v1 server in the SDK's stateless
// Streamable HTTP pattern, plain and with one guard (core and plugin-concurrency) adopted per request, in a
// zod 3 project and a zod 4 one; then bundles the guarded server into a single esbuild file and runs it
// from an empty folder. Prints each check, and the node_modules size and package count of each project
// and what core + one guard add (goal: at most 8 MB and 10 packages). Needs a build and the npm registry.
// Usage: node scripts/consumers-adopt.mjs [--keep]
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packAll, root, run } from './pack.mjs';

const esbuild = createRequire(import.meta.url)('esbuild');
const sources = join(root, 'scripts', 'consumers', 'adopt');
const keep = process.argv.includes('--keep');
const SDK_V1 = '@modelcontextprotocol/sdk@1.32.2';
const GOAL = { bytes: 8 * 1024 * 1024, packages: 10 };

/** Bytes on disk (file sizes) and installed packages (each folder with a package.json under node_modules). */
function measure(dir) {
  let bytes = 0;
  let packages = 0;
  const walk = (path, depth) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) walk(full, depth + 1);
      else bytes += statSync(full).size;
    }
  };
  const countPackages = (modules) => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const full = join(modules, entry.name);
      const names = entry.name.startsWith('@') ? readdirSync(full).map((n) => join(full, n)) : [full];
      for (const pkg of names) {
        if (!existsSync(join(pkg, 'package.json'))) continue;
        packages++;
        countPackages(join(pkg, 'node_modules'));
      }
    }
  };
  walk(join(dir, 'node_modules'), 0);
  countPackages(join(dir, 'node_modules'));
  return { bytes, packages };
}

function exec(command, args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      // The programs print their verdict on stdout; logs (the guard's, on stderr) are shown only on failure.
      const ok = code === 0 && stdout.startsWith('ok');
      resolve({ ok, output: ok ? stdout.trim() : `${stdout}${stderr}`.trim() });
    });
  });
}

function project(work, name, source, installs) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, private: true, type: 'module' }, null, 2)}\n`);
  cpSync(join(sources, source), join(dir, 'app.mjs'));
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...installs], { cwd: dir });
  return dir;
}

/**
 * Checks known to fail today, each with the reason (issue 31): reported as KNOWN, not failed; a known gap that
 * passes fails the run, so that it is taken off this list.
 */
const KNOWN_GAPS = {
  'single-file bundle':
    "core loads its CommonJS dependencies (pino, tapable, tsyringe, reflect-metadata, Ajv, RE2JS) with Node's require at run time (require-cjs.ts), so a bundle leaves them out",
};

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const work = mkdtempSync(join(tmpdir(), 'sluice-adopt-'));
let failed = 0;
const report = (ok, name, detail = '', gap = undefined) => {
  const known = gap !== undefined && KNOWN_GAPS[gap] !== undefined;
  if (ok === known) failed++;
  const status = ok ? (known ? 'FAIL' : 'ok  ') : known ? 'KNOWN' : 'FAIL';
  const why = known ? (ok ? `known gap "${gap}" passes now: take it off KNOWN_GAPS` : KNOWN_GAPS[gap]) : '';
  const lines = [why, detail].filter(Boolean).join('\n');
  process.stdout.write(`${status} ${name}${lines ? `\n${lines.replace(/^/gm, '     ')}` : ''}\n`);
};
try {
  const tarballs = packAll(join(work, 'tarballs'));
  const guard = [tarballs.get('@sluice/core'), tarballs.get('@sluice/plugin-concurrency')];
  const sizes = [];
  let bundled;
  for (const [zod, range] of [
    ['zod 3', 'zod@^3.25.0'],
    ['zod 4', 'zod@^4.2.0'],
  ]) {
    const tag = zod.replace(' ', '');
    const plain = project(work, `plain-${tag}`, 'plain.mjs', [SDK_V1, range]);
    const guarded = project(work, `guarded-${tag}`, 'guarded.mjs', [SDK_V1, range, ...guard]);
    const p = await exec(process.execPath, ['app.mjs'], plain);
    report(p.ok, `v1 server, stateless HTTP pattern, ${zod}`, p.ok ? '' : p.output);
    const g = await exec(process.execPath, ['app.mjs'], guarded);
    report(
      g.ok,
      `the same with one guard adopted per request refuses past maxActive 1, ${zod}`,
      g.ok ? g.output : g.output,
    );
    sizes.push({ zod, plain: measure(plain), guarded: measure(guarded) });
    bundled ??= guarded;
  }

  // One file, nothing beside it: the guarded server bundled by esbuild, copied into an empty folder.
  const empty = mkdtempSync(join(work, 'empty-'));
  try {
    esbuild.buildSync({
      entryPoints: [join(bundled, 'app.mjs')],
      outfile: join(bundled, 'bundle', 'app.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'error',
      // What a bundle of CommonJS dependencies needs in ESM: a require for Node's built-ins.
      banner: {
        js: "import { createRequire as __sluiceRequire } from 'node:module'; const require = __sluiceRequire(import.meta.url);",
      },
    });
    cpSync(join(bundled, 'bundle', 'app.mjs'), join(empty, 'app.mjs'));
    const b = await exec(process.execPath, ['app.mjs'], empty);
    const size = statSync(join(empty, 'app.mjs')).size;
    report(
      b.ok,
      `single-file esbuild bundle (ESM, ${mb(size)}) run from an empty folder`,
      b.ok ? '' : b.output.split('\n').slice(0, 6).join('\n'),
      'single-file bundle',
    );
  } catch (error) {
    report(false, 'single-file esbuild bundle (ESM)', String(error?.message ?? error), 'single-file bundle');
  }

  process.stdout.write(
    '\nnode_modules of a v1 server, plain and with core + one guard (goal: at most +8 MB, +10 packages)\n',
  );
  for (const { zod, plain, guarded } of sizes) {
    const added = { bytes: guarded.bytes - plain.bytes, packages: guarded.packages - plain.packages };
    const within = added.bytes <= GOAL.bytes && added.packages <= GOAL.packages;
    process.stdout.write(
      `${zod}: plain ${mb(plain.bytes)} in ${plain.packages} packages; guarded ${mb(guarded.bytes)} in ${guarded.packages}; ` +
        `added ${mb(added.bytes)} and ${added.packages} packages (${within ? 'within' : 'over'} the goal)\n`,
    );
  }
} finally {
  if (keep) process.stdout.write(`kept ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
process.exitCode = failed > 0 ? 1 : 0;
