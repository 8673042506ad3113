// Builds every package under packages/ in one process, in dependency order (`pnpm build`, `pnpm build:unchecked`):
// what `pnpm -r run build` did with a node and a tsc per package. Each package is built as
// scripts/build-package.mjs builds it, but its TypeScript program is made here, with parsed files shared between the
// programs (scripts/ts-shared-host.mjs): node's types, the SDK, zod and the packages built before are parsed once,
// not once per package. A package's dependencies resolve to their dist/ (tsconfig.build.json clears the
// sluice:source condition), so each is built before the packages that import it.
//
//   node scripts/build-all.mjs [--no-check]    --no-check: emit without type-checking (TypeScript's noCheck)
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { buildPackage } from './build-package.mjs';
import { formatHost, sharedCompilerHosts } from './ts-shared-host.mjs';

const args = process.argv.slice(2);
for (const arg of args) {
  if (arg !== '--no-check') {
    process.stderr.write(`build-all: unknown option ${arg} (expected --no-check)\n`);
    process.exit(2);
  }
}
const noCheck = args.includes('--no-check');

const packagesDir = fileURLToPath(new URL('../packages/', import.meta.url));
const packages = readdirSync(packagesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => join(packagesDir, entry.name))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }));
const byName = new Map(packages.map((p) => [p.manifest.name, p]));

/** The packages, each after every workspace package it depends on (any kind of dependency, as pnpm orders them). */
function dependencyOrder() {
  const order = [];
  const state = new Map();
  const visit = (p, path) => {
    if (state.get(p) === 'done') return;
    if (state.get(p) === 'visiting')
      throw new Error(`build-all: a dependency cycle: ${[...path, p.manifest.name].join(' -> ')}`);
    state.set(p, 'visiting');
    const { dependencies, devDependencies, peerDependencies, optionalDependencies } = p.manifest;
    for (const name of Object.keys({
      ...dependencies,
      ...devDependencies,
      ...peerDependencies,
      ...optionalDependencies,
    })) {
      const dependency = byName.get(name);
      if (dependency !== undefined) visit(dependency, [...path, p.manifest.name]);
    }
    state.set(p, 'done');
    order.push(p);
  };
  for (const p of packages) visit(p, []);
  return order;
}

const compilerHost = sharedCompilerHosts();

/** What `tsc -p tsconfig.build.json [--noCheck]` does in `packageDir`, on the shared host; its exit status. */
function compile(packageDir, skipCheck) {
  const diagnostics = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(packageDir, 'tsconfig.build.json'),
    skipCheck ? { noCheck: true } : {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (diagnostic) => diagnostics.push(diagnostic) },
  );
  if (parsed !== undefined) {
    diagnostics.push(...parsed.errors);
    const program = ts.createProgram({
      rootNames: parsed.fileNames,
      options: parsed.options,
      projectReferences: parsed.projectReferences,
      host: compilerHost(parsed.options),
      configFileParsingDiagnostics: parsed.errors,
    });
    if (!skipCheck) diagnostics.push(...ts.getPreEmitDiagnostics(program));
    diagnostics.push(...program.emit().diagnostics);
  }
  if (diagnostics.length === 0) return 0;
  process.stdout.write(
    ts.formatDiagnosticsWithColorAndContext(ts.sortAndDeduplicateDiagnostics(diagnostics), formatHost),
  );
  return diagnostics.some((d) => d.category === ts.DiagnosticCategory.Error) ? 1 : 0;
}

for (const { dir, manifest } of dependencyOrder()) {
  const started = performance.now();
  const status = await buildPackage(dir, { noCheck, compile });
  if (status !== 0) {
    process.stderr.write(`build-all: ${manifest.name} failed (exit status ${status})\n`);
    process.exit(status);
  }
  process.stdout.write(`built ${manifest.name} (${Math.round(performance.now() - started)} ms)\n`);
}
