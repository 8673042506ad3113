// Runs every bench/*.bench.ts (or those named on the command line) one after
// another, each in a fresh process so that no benchmark warms up another.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();
let failed = 0;
for (const file of files) {
  process.stdout.write(`\n=== ${file} ===\n`);
  const run = spawnSync(
    process.execPath,
    ['--expose-gc', '--conditions=sluice:source', '--import', 'tsx', join(here, file)],
    {
      stdio: 'inherit',
      cwd: here,
    },
  );
  if (run.status !== 0) failed++;
}
process.exitCode = failed > 0 ? 1 : 0;
