// Builds the package in the current directory (or, through buildPackage, the one given) for both module systems:
//   dist/       ESM and its .d.ts, from tsc (the declarations are checked);
//   dist/cjs/   CommonJS, the same sources transpiled file by file by esbuild
//               (for the bundled packages below, the ESM bundle's files
//               turned into CommonJS), with the same declarations beside
//               them and a package.json that marks the folder as CommonJS.
// The SDK v2 ships the same two formats; a CommonJS project (npm's default)
// and TypeScript's node16 resolution from CommonJS then load us on every
// Node version in `engines`, not only where require(esm) exists.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constsOfBundle } from './bundle-consts.mjs';
import { writeVersion } from './versions.mjs';

const require = createRequire(import.meta.url);

function filesUnder(dir, suffix) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path, suffix);
    return entry.name.endsWith(suffix) ? [path] : [];
  });
}

// The ESM build of core, of the guards an adopter adds and of the packages the
// gateway loads at start (the gateway's own, with its `sluice` executable) is
// bundled, one file per entry point plus shared chunks, in place of tsc's file
// per module: importing them is part of every adopter's and every gateway's
// start-up, and Node spends most of a cold import resolving, reading and
// linking modules one by one (bench/cold-import.bench.ts,
// bench/first-list.bench.ts; `sluice serve` to ready: 0.55 -> 0.48 CPU-s). Shared chunks keep
// one copy of each module across the entry points; what loads on first use
// (`import()`) stays a chunk of its own. The declarations stay tsc's. Their
// CommonJS build is made from the same files. Code mode is left out: its
// worker pool starts a file of its own by path.
const BUNDLED_ESM = new Set([
  '@sluice/audit',
  '@sluice/http',
  '@sluice/stdio',
  '@sluice/store-redis',
  '@sluice/upstream',
  '@sluice/core',
  '@sluice/gateway',
  '@sluice/plugin-authz',
  '@sluice/plugin-chaining',
  '@sluice/plugin-concurrency',
  '@sluice/plugin-egress',
  '@sluice/plugin-loop-guard',
  '@sluice/plugin-risk',
  '@sluice/plugin-tool-search',
]);
// Dependencies stay external, but for tapable: it is CommonJS and requires Node's
// "util", which an ESM bundle of core, or of a program using core, can only turn
// into a `require` that throws ("Dynamic require of util"). Inlined here, with
// "util" answered by an ESM module that imports node:util, core's ESM build holds
// no require at all. The CommonJS build, made from the same files, inlines it too.
const inlineTapable = {
  name: 'inline-tapable',
  setup(build) {
    build.onResolve({ filter: /^util$/ }, (args) =>
      /[\\/]tapable[\\/]/.test(args.importer) ? { path: 'util', namespace: 'sluice-node-util' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'sluice-node-util' }, () => ({
      contents: "export { deprecate } from 'node:util';",
      loader: 'js',
    }));
    // Every other bare specifier (a package or a Node built-in) stays an import.
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path === 'tapable' ? undefined : { path: args.path, external: true },
    );
  },
};

/** tsc over the package's tsconfig.build.json, in a process of its own; its exit status. */
function compileWithTsc(packageDir, noCheck) {
  const tsc = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', ...(noCheck ? ['--noCheck'] : [])],
    { cwd: packageDir, stdio: 'inherit' },
  );
  return tsc.status ?? 1;
}

/**
 * Builds the package in `packageDir`. `noCheck` emits the same files without type-checking them (TypeScript's
 * noCheck), about a third less CPU: `pnpm test` and CI build that way, since `pnpm check:code` type-checks every
 * package right after. `compile(packageDir, noCheck)` emits dist/ from tsconfig.build.json and returns an exit
 * status: tsc in a process of its own unless a caller that builds many packages shares one (build-all.mjs).
 * Returns the exit status of the first step that failed, or 0.
 */
export async function buildPackage(packageDir, { noCheck = false, compile = compileWithTsc } = {}) {
  writeVersion(packageDir);
  rmSync(join(packageDir, 'dist'), { recursive: true, force: true });
  const status = compile(packageDir, noCheck);
  if (status !== 0) return status;
  const esbuild = require('esbuild');
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const bundled = BUNDLED_ESM.has(manifest.name);
  // Executables (a `#!` line, like the gateway's CLI) run as ESM through `bin` only.
  const sources = filesUnder(join(packageDir, 'src'), '.ts').filter(
    (file) => !file.endsWith('.d.ts') && !readFileSync(file, 'utf8').startsWith('#!'),
  );
  // A bundled package's CommonJS build is made from its bundle, below; the others' file by file from the sources.
  // esbuild names sources in its comments relative to its working directory: the package's, wherever the build runs.
  if (!bundled)
    esbuild.buildSync({
      absWorkingDir: packageDir,
      entryPoints: sources,
      outdir: join(packageDir, 'dist', 'cjs'),
      outbase: join(packageDir, 'src'),
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      sourcemap: true,
      logLevel: 'warning',
      // Code mode's pool reads import.meta.url, empty in CommonJS, where it has __filename.
      logOverride: { 'empty-import-meta': 'silent' },
    });
  for (const declaration of filesUnder(join(packageDir, 'dist'), '.d.ts')) {
    const rel = relative(join(packageDir, 'dist'), declaration);
    if (rel.startsWith('cjs') || !sources.includes(join(packageDir, 'src', rel.replace(/\.d\.ts$/, '.ts')))) continue;
    const target = join(packageDir, 'dist', 'cjs', rel);
    mkdirSync(dirname(target), { recursive: true });
    cpSync(declaration, target);
  }
  mkdirSync(join(packageDir, 'dist', 'cjs'), { recursive: true });
  writeFileSync(join(packageDir, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');

  if (bundled) {
    const dist = join(packageDir, 'dist');
    // The entry points of `exports`, and the source forms of each `imports` entry (core's `#root-container`
    // has one per condition): imported by name, they stay files of their own beside the bundle.
    const sourcesOf = (target) => {
      if (typeof target !== 'object' || target === null) return [];
      const source = target['sluice:source'];
      if (typeof source === 'string') return [source];
      return typeof source === 'object' && source !== null ? Object.values(source) : [];
    };
    // An executable of `bin` (dist/cli.js, from src/cli.ts) is an entry point too, its `#!` line kept.
    const executables = Object.values(manifest.bin ?? {}).map((built) =>
      built.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts'),
    );
    const entryPoints = [...Object.values(manifest.exports), ...Object.values(manifest.imports ?? {})]
      .flatMap(sourcesOf)
      .concat(executables)
      .map((source) => join(packageDir, source));
    const staging = join(packageDir, 'dist-bundle');
    rmSync(staging, { recursive: true, force: true });
    await esbuild.build({
      absWorkingDir: packageDir,
      entryPoints,
      outdir: staging,
      outbase: join(packageDir, 'src'),
      bundle: true,
      splitting: true,
      plugins: [inlineTapable],
      format: 'esm',
      platform: 'node',
      target: 'node20',
      chunkNames: 'chunks/[name]-[hash]',
      sourcemap: true,
      logLevel: 'warning',
    });
    // esbuild declares the bundle's top-level constants `var`: they get their `const` back (bundle-consts.mjs).
    for (const file of filesUnder(staging, '.js')) {
      const { text, consts } = constsOfBundle(readFileSync(file, 'utf8'));
      if (consts > 0) writeFileSync(file, text);
    }
    const cjs = join(dist, 'cjs');
    for (const file of [...filesUnder(dist, '.js'), ...filesUnder(dist, '.js.map')]) rmSync(file);
    cpSync(staging, dist, { recursive: true });
    // The CommonJS build is the same files, each turned into CommonJS: Node requires a few files instead of one
    // per module (48 for core, with tapable's 16), and the entry points still share one copy of every module
    // (esbuild splits ESM only). A chunk loaded on first use stays so: `import()` becomes a deferred require.
    await esbuild.build({
      absWorkingDir: packageDir,
      // Executables run as ESM only (through `bin`), as in the unbundled build.
      entryPoints: filesUnder(staging, '.js').filter((file) => !readFileSync(file, 'utf8').startsWith('#!')),
      outdir: cjs,
      outbase: staging,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      supported: { 'dynamic-import': false },
      sourcemap: true,
      logLevel: 'warning',
      // src/require-cjs.ts reads import.meta.url only where __filename is missing (ESM).
      logOverride: { 'empty-import-meta': 'silent' },
    });
    rmSync(staging, { recursive: true, force: true });
    // dist/cjs/package.json makes the folder a package scope of its own, where Node (and publint) read no
    // `imports`: each `require("#name")` there becomes a relative require of the entry's `require` target,
    // built from the source of the same name.
    for (const [name, target] of Object.entries(manifest.imports ?? {})) {
      const built = join(packageDir, target.require);
      const source = join(packageDir, 'src', relative(cjs, built).replace(/\.js$/, '.ts'));
      esbuild.buildSync({
        absWorkingDir: packageDir,
        entryPoints: [source],
        outfile: built,
        format: 'cjs',
        platform: 'node',
        target: 'node20',
      });
      for (const file of filesUnder(cjs, '.js')) {
        const text = readFileSync(file, 'utf8');
        const to = relative(dirname(file), built).replace(/\\/g, '/');
        const rewritten = text.replaceAll(`require("${name}")`, `require("${to.startsWith('.') ? to : `./${to}`}")`);
        if (rewritten !== text) writeFileSync(file, rewritten);
      }
      // The ESM forms, turned into CommonJS with the rest, are never required.
      for (const [condition, path] of Object.entries(target))
        if (condition !== 'sluice:source' && condition !== 'require' && typeof path === 'string')
          for (const suffix of ['', '.map'])
            rmSync(join(cjs, relative(dist, join(packageDir, path))) + suffix, { force: true });
    }
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = await buildPackage(process.cwd(), { noCheck: process.argv.includes('--no-check') });
}
