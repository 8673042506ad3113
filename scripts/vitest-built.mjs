// `vitest run` over the build that `pnpm test` has just made: the gateway's tests start `sluice` from
// packages/gateway/dist and code mode's worker threads start packages/plugin-code-mode/dist, rather than
// loading the same sources through tsx (a third and a fifth of the CPU time), so that the suite holds on a
// small machine. A variable already set wins. Arguments go to vitest: node scripts/vitest-built.mjs packages/core
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const env = { SLUICE_TEST_CLI: 'dist', SLUICE_TEST_WORKER: 'dist', ...process.env };
const child = spawn(process.execPath, [vitest, 'run', ...process.argv.slice(2)], { env, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => (process.exitCode = code ?? (signal ? 1 : 0)));
