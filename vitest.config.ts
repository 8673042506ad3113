import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files run in this many worker processes at once. Most of our tests wait on I/O (child
 * processes, loopback sockets, Redis, chromium), so one worker more than there are cores keeps
 * the cores busy; vitest's own default (cores - 1) ran one file at a time on a 2-core machine.
 * SLUICE_TEST_WORKERS overrides it (1 runs files one after another).
 */
function workers(): number {
  const fromEnv = process.env.SLUICE_TEST_WORKERS;
  if (fromEnv !== undefined && fromEnv !== '') {
    const n = Number(fromEnv);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`SLUICE_TEST_WORKERS must be a positive integer, not "${fromEnv}"`);
    return n;
  }
  return availableParallelism() + 1;
}

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources of the workspace packages.
    conditions: ['sluice:source'],
  },
  ssr: {
    resolve: { conditions: ['sluice:source'] },
  },
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'docs/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: workers(),
  },
});
