// A soak: calls run without pause against the server under test (every plugin
// on, in a child process with --expose-gc) for SLUICE_SOAK_SECONDS (default 20;
// set 600 for the 10-minute soak). After GC, the heap and the process's active
// handles must not have grown beyond a bound, and no slot may be left taken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnHttpServer, startedChildren } from './child.js';
import type { ServerChild } from './child.js';
import type { Diagnostics } from './fixtures/sluice-under-test.js';
import { HOLD_LIMIT } from './fixtures/sluice-under-test.js';
import { callTool, refusalCode } from './rpc.js';
import type { JsonRpcResponse } from './rpc.js';

const SECONDS = Number(process.env.SLUICE_SOAK_SECONDS ?? 20);
const WORKERS = 8;
/** Heap growth allowed after GC: far above noise, far below a per-call leak over thousands of calls. */
const HEAP_BOUND_BYTES = 16 * 1024 * 1024;
/** Handles allowed beyond the warm state: a few keep-alive sockets may come and go. */
const HANDLE_BOUND = WORKERS;

const total = (handles: Record<string, number>): number => Object.values(handles).reduce((sum, n) => sum + n, 0);

function report(response: JsonRpcResponse): Diagnostics {
  const diagnostics = response.result?.structuredContent as Diagnostics | undefined;
  if (!diagnostics) throw new Error(`diagnostics failed: ${JSON.stringify(response).slice(0, 300)}`);
  return diagnostics;
}

/** One of the calls a soak worker makes, in turn: plain, guarded, chained, refused. */
function nextCall(url: URL, n: number): Promise<JsonRpcResponse> {
  switch (n % 4) {
    case 0:
      return callTool(url, 'echo', { n, text: 'soak', nested: { list: [1, 2, 3] } });
    case 1:
      return callTool(url, 'hold', { ms: n % 3 });
    case 2:
      return callTool(url, 'reflect_next', { next: { tool: 'echo', arguments: { n } } });
    default:
      return callTool(url, 'missing_tool', {});
  }
}

describe(`a ${SECONDS}-second soak over HTTP`, () => {
  let server: ServerChild & { url: URL };
  const children = startedChildren();
  beforeAll(async () => {
    server = children.add(await spawnHttpServer(['--expose-gc']));
  }, 60_000);
  afterAll(() => children.stopAll());

  it(
    'keeps the heap and the handles flat, answers every call, and leaves no slot taken',
    async () => {
      const run = async (untilMs: number): Promise<number> => {
        let calls = 0;
        await Promise.all(
          Array.from({ length: WORKERS }, async (_, worker) => {
            for (let n = worker; Date.now() < untilMs; n += WORKERS) {
              const response = await nextCall(server.url, n);
              expect(response.result ?? response.error).toBeDefined();
              calls++;
            }
          }),
        );
        return calls;
      };
      // Warm up (JIT, pools, caches) before the first measurement.
      await run(Date.now() + Math.min(3_000, SECONDS * 200));
      const before = report(await callTool(server.url, 'diagnostics', {}));
      const started = Date.now();
      const calls = await run(started + SECONDS * 1000);
      const elapsed = (Date.now() - started) / 1000;
      const after = report(await callTool(server.url, 'diagnostics', {}));

      const numbers = {
        seconds: Math.round(elapsed),
        calls,
        callsPerSecond: Math.round(calls / elapsed),
        heapBeforeMiB: +(before.heapUsed / 2 ** 20).toFixed(1),
        heapAfterMiB: +(after.heapUsed / 2 ** 20).toFixed(1),
        handlesBefore: before.handles,
        handlesAfter: after.handles,
      };
      console.info(`soak: ${JSON.stringify(numbers)}`);
      expect(server.alive(), server.stderr()).toBe(true);
      expect(after.heapUsed - before.heapUsed).toBeLessThan(HEAP_BOUND_BYTES);
      expect(total(after.handles)).toBeLessThanOrEqual(total(before.handles) + HANDLE_BOUND);
      const holds = await Promise.all(
        Array.from({ length: HOLD_LIMIT.maxActive + 1 }, () => callTool(server.url, 'hold', { ms: 1_000 })),
      );
      expect(holds.filter((response) => refusalCode(response) === 'SERVER_BUSY')).toHaveLength(1);
    },
    (SECONDS + 120) * 1000,
  );
});
