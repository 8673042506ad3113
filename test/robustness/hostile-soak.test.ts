// A soak with a hostile client and a hostile upstream mixed into normal load:
// normal workers call local tools and tools of well-behaved upstreams (over
// stdio and HTTP, in processes apart from the hostile ones) and check every
// answer exactly, while one worker attacks as a client (deep arguments,
// large initialize, session floods, a foreign Host, an over-long filter header)
// and one makes the upstream attack (progress floods, huge answers, HTTP 500s,
// catastrophic schemas, label-shaped codes). Runs for
// SLUICE_HOSTILE_SOAK_SECONDS (default 10; set 60 or more for the measured
// soak). After GC, the heap must not have grown beyond a bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnHostileServer, spawnHostileUpstream } from './child.js';
import type { ServerChild } from './child.js';
import type { Diagnostics } from './fixtures/sluice-under-test.js';
import { hostileSchemas } from './hostile-arbitraries.js';
import { ENVELOPE, callTool, modernHeaders, post, refusalCode } from './rpc.js';
import type { JsonRpcResponse } from './rpc.js';

const SECONDS = Number(process.env.SLUICE_HOSTILE_SOAK_SECONDS ?? 10);
const NORMAL_WORKERS = 6;
/** SLUICE_HOSTILE_SOAK_QUIET=1: the same normal load with no attacker, as the baseline to compare with. */
const QUIET = process.env.SLUICE_HOSTILE_SOAK_QUIET === '1';
/** Heap growth allowed after GC: hostile payloads are megabytes each, a leak of them would show far above this. */
const HEAP_BOUND_BYTES = 24 * 1024 * 1024;
const SCHEMAS = hostileSchemas(16, 16)
  .filter((schema) => !schema.valid)
  .slice(0, 2);

const textOf = (response: JsonRpcResponse): string =>
  ((response.result?.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');

function report(response: JsonRpcResponse): Diagnostics {
  const diagnostics = response.result?.structuredContent as Diagnostics | undefined;
  if (!diagnostics) throw new Error(`diagnostics failed: ${JSON.stringify(response).slice(0, 300)}`);
  return diagnostics;
}

/** One normal call and the exact answer it must get. */
function normalCall(url: URL, n: number): [Promise<JsonRpcResponse>, string] {
  const args = { n, text: 'soak', nested: { list: [1, 2, 3] } };
  switch (n % 3) {
    case 0:
      return [callTool(url, 'echo', args), `3 keys, ${JSON.stringify(args).length} characters`];
    case 1:
      return [callTool(url, 'ns_echo', args), JSON.stringify(args)];
    default:
      return [callTool(url, 'nh_echo', args), JSON.stringify(args)];
  }
}

describe(`a ${SECONDS}-second soak with a hostile client and a hostile upstream`, () => {
  let upstream: ServerChild & { url: URL };
  let normalUpstream: ServerChild & { url: URL };
  let server: ServerChild & { url: URL };

  beforeAll(async () => {
    upstream = await spawnHostileUpstream();
    normalUpstream = await spawnHostileUpstream();
    server = await spawnHostileServer(
      upstream.url,
      {
        SLUICE_MAX_SESSIONS: '64',
        HOSTILE_SCHEMAS: JSON.stringify(SCHEMAS),
        NORMAL_UPSTREAMS: '1',
        NORMAL_HTTP_URL: normalUpstream.url.href,
      },
      ['--expose-gc', '--max-old-space-size=256'],
    );
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await upstream?.stop();
    await normalUpstream?.stop();
  });

  it(
    'answers every normal call correctly and keeps the heap flat',
    async () => {
      const wrong: string[] = [];
      let normal = 0;
      let hostile = 0;
      const attacks: readonly (() => Promise<unknown>)[] = [
        // The client side.
        async () => {
          const deep = `${'['.repeat(5_000)}1${']'.repeat(5_000)}`;
          const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hs_echo","arguments":{"v":${deep}},"_meta":${JSON.stringify(ENVELOPE)}}}`;
          return post(server.url, body, modernHeaders('tools/call', 'hs_echo'), 20_000);
        },
        () =>
          post(
            server.url,
            JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'initialize',
              params: {
                protocolVersion: '2025-11-25',
                capabilities: {},
                clientInfo: { name: 'x'.repeat(3_000_000), version: '1' },
              },
            }),
            {},
            20_000,
          ),
        async () => {
          const initialize = JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'f', version: '1' } },
          });
          for (let i = 0; i < 50; i++) await post(server.url, initialize, {}, 20_000);
        },
        () => fetch(server.url, { headers: { host: 'rebind.attacker.example' } }).then((r) => r.text()),
        () =>
          fetch(server.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              ...modernHeaders('tools/call', 'hs_echo'),
              'x-sluice-exclude-tools': Array.from({ length: 100 }, (_, i) => `t${i}`).join(','),
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'hs_echo', arguments: {}, _meta: ENVELOPE },
            }),
          }).then((r) => r.text()),
        // The upstream side.
        () =>
          post(
            server.url,
            JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: {
                name: 'hs_progress_flood',
                arguments: { count: 20_000 },
                _meta: { ...ENVELOPE, progressToken: 'p' },
              },
            }),
            modernHeaders('tools/call', 'hs_progress_flood'),
            60_000,
          ),
        () => callTool(server.url, 'hh_huge', { bytes: 24 * 2 ** 20 }, 60_000),
        () => callTool(server.url, 'hh_fail500', {}, 20_000),
        () => callTool(server.url, `hs_${SCHEMAS[0]!.name}`, { structured: SCHEMAS[0]!.defeat }, 20_000),
        () => callTool(server.url, 'hs_scripted', { label: `CODE_${Math.random()}`.repeat(50) }, 20_000),
      ];

      const run = async (untilMs: number): Promise<void> => {
        const normals = Array.from({ length: NORMAL_WORKERS }, async (_, worker) => {
          for (let n = worker; Date.now() < untilMs; n += NORMAL_WORKERS) {
            const [answer, expected] = normalCall(server.url, n);
            const got = await answer;
            normal++;
            if (textOf(got) !== expected) wrong.push(JSON.stringify(got).slice(0, 300));
          }
        });
        const attackers = (QUIET ? [] : [0, 5]).map(async (offset) => {
          for (let i = offset; Date.now() < untilMs; i++) {
            await attacks[i % attacks.length]!().catch(() => undefined);
            hostile++;
          }
        });
        await Promise.all([...normals, ...attackers]);
      };

      await run(Date.now() + Math.min(3_000, SECONDS * 200));
      const before = report(await callTool(server.url, 'diagnostics', {}));
      const started = Date.now();
      normal = 0;
      hostile = 0;
      await run(started + SECONDS * 1000);
      const elapsed = (Date.now() - started) / 1000;
      const after = report(await callTool(server.url, 'diagnostics', {}));

      const numbers = {
        seconds: Math.round(elapsed),
        normalCalls: normal,
        normalPerSecond: Math.round(normal / elapsed),
        wrongAnswers: wrong.length,
        hostileRequests: hostile,
        heapBeforeMiB: +(before.heapUsed / 2 ** 20).toFixed(1),
        heapAfterMiB: +(after.heapUsed / 2 ** 20).toFixed(1),
      };
      console.info(`hostile soak${QUIET ? ' (quiet baseline)' : ''}: ${JSON.stringify(numbers)}`);
      expect(server.alive(), server.stderr()).toBe(true);
      expect(wrong, wrong.slice(0, 3).join('\n')).toEqual([]);
      expect(after.heapUsed - before.heapUsed).toBeLessThan(HEAP_BOUND_BYTES);
      expect(refusalCode(await callTool(server.url, 'hs_echo', { last: true }))).toBeUndefined();
    },
    (SECONDS + 180) * 1000,
  );
});
