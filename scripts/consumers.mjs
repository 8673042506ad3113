// Packs every package, installs the tarballs with npm into a throwaway project
// outside the workspace, and runs the same small program there as each kind of
// consumer: ESM, CommonJS, TypeScript node16 from ESM and from CommonJS,
// TypeScript bundler, esbuild bundles in both formats, a rollup bundle (ESM;
// rollup's WebAssembly build, no native binary) and a webpack bundle
// (CommonJS). Each program starts
// a server with one guard (concurrency) and calls it with the SDK's client over
// loopback HTTP. Then the first-hour journey (scripts/first-hour.mjs) on the same
// tarballs. Needs a build and the npm registry. Usage: node scripts/consumers.mjs
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstHour } from './first-hour.mjs';
import { packAll, root, run } from './pack.mjs';

const require = createRequire(import.meta.url);
const esbuild = require('esbuild');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const sources = join(root, 'scripts', 'consumers');
const keep = process.argv.includes('--keep');

function write(file, value) {
  writeFileSync(file, typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`);
}

/** A folder of the project with its own package.json `type` and, for TypeScript, a tsconfig. */
function consumer(project, name, type, files, tsconfig) {
  const dir = join(project, name);
  mkdirSync(dir, { recursive: true });
  write(join(dir, 'package.json'), { name: `consumer-${name}`, private: true, type });
  for (const [from, to] of files) cpSync(join(sources, from), join(dir, to));
  if (tsconfig) {
    write(join(dir, 'tsconfig.json'), {
      compilerOptions: { target: 'ES2022', strict: true, types: ['node'], outDir: 'dist', ...tsconfig },
      include: ['*.ts'],
    });
  }
  return dir;
}

function exec(command, args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function steps(name, list) {
  for (const [command, args, cwd] of list) {
    const { code, output } = await exec(command, args, cwd);
    if (code !== 0) return { name, ok: false, output: `${command} ${args.join(' ')}\n${output}` };
    if (list.at(-1)[0] === command && list.at(-1)[1] === args && !output.includes('ok')) {
      return { name, ok: false, output };
    }
  }
  return { name, ok: true, output: '' };
}

/** Bundles `app.mjs` into `bundle/app.mjs` with rollup, resolving packages as Node would. */
async function bundleWithRollup(fromProject, dir) {
  const { rollup } = fromProject('@rollup/wasm-node');
  const { nodeResolve } = fromProject('@rollup/plugin-node-resolve');
  const commonjs = fromProject('@rollup/plugin-commonjs');
  const json = fromProject('@rollup/plugin-json');
  const built = await rollup({
    input: join(dir, 'app.mjs'),
    plugins: [nodeResolve({ exportConditions: ['node'], preferBuiltins: true }), commonjs(), json()],
    onwarn: () => {},
  });
  await built.write({ dir: join(dir, 'bundle'), format: 'es', entryFileNames: 'app.mjs' });
  await built.close();
}

/** Bundles `app.cjs` into `bundle/app.cjs` with webpack for Node; answers the errors, or '' when it built. */
function bundleWithWebpack(fromProject, dir) {
  const webpack = fromProject('webpack');
  return new Promise((resolve) => {
    webpack(
      {
        mode: 'none',
        target: 'node20',
        context: dir,
        entry: './app.cjs',
        output: { path: join(dir, 'bundle'), filename: 'app.cjs', library: { type: 'commonjs2' } },
        resolve: { conditionNames: ['node', 'require', 'import', 'default'] },
        // The real paths of the bundled files, so that modules that locate themselves (require-cjs) resolve.
        node: { __filename: 'node-module', __dirname: 'node-module' },
        infrastructureLogging: { level: 'error' },
      },
      (error, stats) => {
        if (error) resolve(String(error.stack ?? error));
        else if (stats?.hasErrors()) resolve(stats.toString({ all: false, errors: true }));
        else resolve('');
      },
    );
  });
}

const work = mkdtempSync(join(tmpdir(), 'sluice-consumers-'));
let failed = 0;
try {
  const tarballs = packAll(join(work, 'tarballs'));
  const project = join(work, 'project');
  mkdirSync(project);
  write(join(project, 'package.json'), { name: 'sluice-consumers', private: true });
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      tarballs.get('@sluice/core'),
      tarballs.get('@sluice/http'),
      tarballs.get('@sluice/plugin-concurrency'),
      '@modelcontextprotocol/client@^2.4.0',
      'zod@^4.2.0',
      '@types/node@^20',
      '@rollup/wasm-node@^4.68.0',
      '@rollup/plugin-node-resolve@^16.0.0',
      '@rollup/plugin-commonjs@^29.0.0',
      '@rollup/plugin-json@^6.1.0',
      'webpack@^5.100.0',
    ],
    { cwd: project },
  );

  const esm = consumer(project, 'esm', 'module', [['esm.mjs', 'app.mjs']]);
  const cjs = consumer(project, 'cjs', 'commonjs', [['cjs.cjs', 'app.cjs']]);
  const node16Esm = consumer(project, 'ts-node16-esm', 'module', [['app.ts', 'app.ts']], {
    module: 'node16',
    moduleResolution: 'node16',
  });
  // The declaration files themselves are checked once, above (the CommonJS build carries the same ones); the
  // two checks below resolve them in their own mode and check the program against them. attw
  // (scripts/check-packages.mjs) resolves every entry point in each mode too.
  const node16Cjs = consumer(project, 'ts-node16-cjs', 'commonjs', [['app.ts', 'app.ts']], {
    module: 'node16',
    moduleResolution: 'node16',
    skipLibCheck: true,
  });
  const bundler = consumer(project, 'ts-bundler', 'module', [['app.ts', 'app.ts']], {
    module: 'esnext',
    moduleResolution: 'bundler',
    noEmit: true,
    skipLibCheck: true,
  });
  const bundleEsm = consumer(project, 'esbuild-esm', 'module', [['esm.mjs', 'app.mjs']]);
  const bundleCjs = consumer(project, 'esbuild-cjs', 'commonjs', [['cjs.cjs', 'app.cjs']]);
  const bundle = (dir, entry, format) => {
    esbuild.buildSync({
      entryPoints: [join(dir, entry)],
      outfile: join(dir, 'bundle', format === 'esm' ? 'app.mjs' : 'app.cjs'),
      bundle: true,
      platform: 'node',
      format,
      logLevel: 'error',
    });
  };
  bundle(bundleEsm, 'app.mjs', 'esm');
  bundle(bundleCjs, 'app.cjs', 'cjs');
  bundle(bundler, 'app.ts', 'esm');
  const rollupEsm = consumer(project, 'rollup-esm', 'module', [['esm.mjs', 'app.mjs']]);
  const webpackCjs = consumer(project, 'webpack-cjs', 'commonjs', [['cjs.cjs', 'app.cjs']]);
  const fromProject = createRequire(join(project, 'package.json'));
  const [rollupBuilt, webpackBuilt] = await Promise.all([
    bundleWithRollup(fromProject, rollupEsm).then(
      () => '',
      (error) => String(error?.stack ?? error),
    ),
    bundleWithWebpack(fromProject, webpackCjs),
  ]);

  const node = process.execPath;
  const results = await Promise.all([
    steps('ESM', [[node, ['app.mjs'], esm]]),
    steps('CommonJS', [[node, ['app.cjs'], cjs]]),
    // The ESM build imported from `node -e`, where Node defines a global `__filename` of "[eval]".
    steps('ESM build imported from node -e', [
      [
        node,
        [
          '-e',
          "Promise.all([import('@sluice/core'), import('@sluice/plugin-concurrency')]).then(([core, guard]) => { if (typeof core.createServer !== 'function' || typeof guard.concurrency !== 'function') process.exit(1); console.log('ok'); })",
        ],
        cjs,
      ],
    ]),
    steps('TypeScript node16, ESM', [
      [node, [tsc, '-p', '.'], node16Esm],
      [node, ['dist/app.js'], node16Esm],
    ]),
    steps('TypeScript node16, CommonJS', [
      [node, [tsc, '-p', '.'], node16Cjs],
      [node, ['dist/app.js'], node16Cjs],
    ]),
    steps('TypeScript bundler (checked, then bundled by esbuild)', [
      [node, [tsc, '-p', '.'], bundler],
      [node, ['bundle/app.mjs'], bundler],
    ]),
    steps('esbuild bundle, ESM', [[node, ['bundle/app.mjs'], bundleEsm]]),
    steps('esbuild bundle, CommonJS', [[node, ['bundle/app.cjs'], bundleCjs]]),
    rollupBuilt
      ? { name: 'rollup bundle, ESM', ok: false, output: rollupBuilt }
      : steps('rollup bundle, ESM', [[node, ['bundle/app.mjs'], rollupEsm]]),
    webpackBuilt
      ? { name: 'webpack bundle, CommonJS', ok: false, output: webpackBuilt }
      : steps('webpack bundle, CommonJS', [[node, ['bundle/app.cjs'], webpackCjs]]),
  ]);
  // The operator's and the plugin author's first hour, from the same tarballs (scripts/first-hour.mjs).
  results.push(
    await firstHour(tarballs, work).then(
      () => ({ name: 'first hour: sluice init, a packed plugin, sluice serve', ok: true, output: '' }),
      (error) => ({
        name: 'first hour: sluice init, a packed plugin, sluice serve',
        ok: false,
        output: String(error?.stack ?? error),
      }),
    ),
  );
  for (const result of results) {
    process.stdout.write(`${result.ok ? 'ok  ' : 'FAIL'} ${result.name}\n`);
    if (!result.ok) {
      failed++;
      process.stdout.write(`${result.output.trim().replace(/^/gm, '     ')}\n`);
    }
  }
} finally {
  if (keep) process.stdout.write(`kept ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
process.exitCode = failed > 0 ? 1 : 0;
