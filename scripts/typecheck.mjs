// Type-checks every package and example with its tsconfig.json (sources and
// tests, type tests included), two at a time.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const projects = [
  'tsconfig.json',
  ...['packages', 'examples'].flatMap((dir) =>
    readdirSync(dir)
      .map((name) => join(dir, name, 'tsconfig.json'))
      .filter((file) => existsSync(file)),
  ),
];
const tsc = join('node_modules', 'typescript', 'bin', 'tsc');
let failed = 0;
const run = (project) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, '-p', project, '--noEmit'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => {
      if (code !== 0) failed++;
      process.stdout.write(`${code === 0 ? 'ok  ' : 'FAIL'} ${project}\n${code === 0 ? '' : out}`);
      resolve();
    });
  });
const queue = [...projects];
await Promise.all(
  [0, 1].map(async () => {
    while (queue.length > 0) await run(queue.shift());
  }),
);
process.exitCode = failed > 0 ? 1 : 0;
