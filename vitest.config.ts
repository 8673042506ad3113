import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

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

const include = [
  'packages/*/test/**/*.test.ts',
  'examples/*/test/**/*.test.ts',
  'docs/test/**/*.test.ts',
  'test/**/*.test.ts',
];

/**
 * The files that need a process of their own: they check what a process has not loaded yet (core without
 * `@sluice/http` or `@sluice/upstream` registered, the logger's and the container's first load), measure the
 * process's own heap, which other files' leftovers would blur, or keep Redis leases alive with timers that must
 * fire within a lease (store-redis: a waiter whose heartbeat an earlier file's leftovers delayed lost its place). Every other file shares its worker's module
 * cache with the files run before it there: re-importing the same sources for each of some 250 files cost more
 * than a third of the suite's time. A file that sets process-wide state puts it back when it ends.
 */
const ownProcess = [
  'packages/core/test/server.test.ts',
  'packages/core/test/logger.test.ts',
  'packages/core/test/container.test.ts',
  'packages/http/test/auth-costs.test.ts',
  'packages/http/test/node-front.test.ts',
  'packages/gateway/test/hostile-soak.test.ts',
  'packages/store-redis/test/**/*.test.ts',
  'test/robustness/**/*.test.ts',
];

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources of the workspace packages.
    conditions: ['sluice:source'],
  },
  ssr: {
    resolve: { conditions: ['sluice:source'] },
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: workers(),
    projects: [
      {
        extends: true,
        test: { name: 'shared', include, exclude: [...configDefaults.exclude, ...ownProcess], isolate: false },
      },
      { extends: true, test: { name: 'own-process', include: ownProcess } },
    ],
  },
});
