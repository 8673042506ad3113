import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

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

/**
 * Files that take the longest (CI's list of the slowest files, `.ci/run`), started before any other file of their
 * project. On a fresh clone vitest has no timings of earlier runs and starts the largest files first, which left
 * files of 40 s (the conformance suite) to start last and run alone while the other workers had nothing to do.
 */
const slowFirst = [
  'test/robustness/fuzz.test.ts',
  'packages/gateway/test/fleet/chaos.test.ts',
  'packages/gateway/test/fair-shares.test.ts',
  'packages/http/test/upstream-per-user.test.ts',
  'packages/gateway/test/fleet/failures.test.ts',
  'packages/gateway/test/hostile.test.ts',
  'packages/plugin-code-mode/test/sandbox.test.ts',
  'examples/conformance-server/test/conformance.test.ts',
  'packages/gateway/test/ledger-cli.test.ts',
  'packages/gateway/test/cli.test.ts',
  'packages/gateway/test/code-mode-shares.test.ts',
  'docs/test/publishable-plugin.test.ts',
  'docs/test/code-blocks.test.ts',
  'packages/gateway/test/create.test.ts',
];

/** Vitest's order (projects one after another; in a project, what it knows of earlier runs), slow files first. */
class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const projects = [...new Set(sorted.map((file) => file.project.name))];
    const rank = (file: TestSpecification): number => {
      const at = slowFirst.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return at < 0 ? slowFirst.length : at;
    };
    const keyed = sorted.map((file, index) => ({ file, index, project: projects.indexOf(file.project.name) }));
    keyed.sort((a, b) => a.project - b.project || rank(a.file) - rank(b.file) || a.index - b.index);
    return keyed.map(({ file }) => file);
  }
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
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: workers(),
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        extends: true,
        test: { name: 'shared', include, exclude: [...configDefaults.exclude, ...ownProcess], isolate: false },
      },
      { extends: true, test: { name: 'own-process', include: ownProcess } },
    ],
  },
});
