// Lints the whole workspace (eslint.config.mjs, no warnings allowed) in two
// eslint processes side by side, split by project: typescript-eslint's project
// service builds one TypeScript program per tsconfig.json it meets, so the
// first process takes the packages that share most sources (gateway and what
// it is built on), the second everything else. Each file is still linted once,
// in the program of its own tsconfig.json, with the same rules as `eslint .`.
// Usage: node scripts/lint-code.mjs [extra eslint arguments]
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const first = [
  'packages/gateway',
  'packages/core',
  'packages/upstream',
  'packages/http',
  'packages/store-redis',
  'packages/plugin-code-mode',
];
const eslint = join('node_modules', 'eslint', 'bin', 'eslint.js');
const extra = process.argv.slice(2);
const halves = [[...first], ['.', ...first.flatMap((dir) => ['--ignore-pattern', `${dir}/**`])]];

const run = (args) =>
  new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--max-old-space-size=8192', eslint, '--max-warnings', '0', ...extra, ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => resolve({ code, out }));
  });
const results = await Promise.all(halves.map(run));
for (const { out } of results) process.stdout.write(out);
process.exitCode = results.some(({ code }) => code !== 0) ? 1 : 0;
