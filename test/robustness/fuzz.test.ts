// Hostile JSON-RPC against a Sluice server with every plugin on, over loopback
// HTTP and over stdio, in both protocol versions. Properties: every request
// is answered (a valid response, or a clear JSON-RPC error) within a bound,
// the process stays up, no concurrency slot leaks, and Object.prototype is
// untouched in the server's own process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { requestText } from './arbitraries.js';
import type { RequestText } from './arbitraries.js';
import { spawnHttpServer, spawnServer, startedChildren } from './child.js';
import type { ServerChild } from './child.js';
import { HOLD_LIMIT } from './fixtures/sluice-under-test.js';
import type { Diagnostics } from './fixtures/sluice-under-test.js';
import {
  ENVELOPE,
  LEGACY,
  answerableId,
  callTool,
  isMessage,
  isResponse,
  modernHeaders,
  post,
  refusalCode,
} from './rpc.js';
import type { HttpAnswer, JsonRpcResponse } from './rpc.js';
import { StdioPeer } from './stdio-peer.js';

/**
 * Generated requests per transport (split between the two protocol versions): 1,000 by default, the full
 * 10,000 with SLUICE_DEEP=1 (run it before resolving anything that touches this ground), or SLUICE_FUZZ_RUNS.
 */
const RUNS = Number(process.env.SLUICE_FUZZ_RUNS ?? (process.env.SLUICE_DEEP === '1' ? 10_000 : 1_000));
/** No single request may take longer than this to be answered: longer is a hang. */
const ANSWER_BOUND_MS = 20_000;
/**
 * The stdio server's line cap (the SDK's `STDIO_DEFAULT_MAX_BUFFER_SIZE`, 10 MiB): a longer line is refused
 * unread, with an error whose id is null, since the server never parsed it to learn one.
 */
const STDIO_LINE_CAP_BYTES = 10 * 1024 * 1024;
const SUITE_TIMEOUT_MS = 600_000;

/** Codes a server answers with when it cannot know the request's id. */
const ID_UNKNOWABLE = new Set([-32700, -32600]);
/** A body over the size limit is refused unread, so its id is unknown too. */
const TOO_LARGE = 413;

function diagnosticsOf(response: JsonRpcResponse): Diagnostics {
  const structured = response.result?.structuredContent as Diagnostics | undefined;
  if (!structured) throw new Error(`diagnostics failed: ${JSON.stringify(response).slice(0, 300)}`);
  return structured;
}

const generated = fc.boolean().chain((modern) => requestText(modern).map((request) => ({ ...request, modern })));

/** The same number of generated bodies, a few of them as raw bytes that are not UTF-8. */
const httpBody = fc.oneof(
  { weight: 30, arbitrary: generated },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 64 })
      .map((bytes) => ({ body: bytes, method: undefined, name: undefined, modern: true })),
  },
);

/** What every HTTP answer must be: JSON-RPC throughout, an error response for every HTTP error, the request's id echoed. */
function checkHttpAnswer(answer: HttpAnswer, id: string | number | undefined): void {
  const context = `HTTP ${answer.status}: ${answer.raw.slice(0, 300)}`;
  expect(answer.status, context).toBeLessThan(500);
  for (const message of answer.messages) expect(isMessage(message), context).toBe(true);
  const response = answer.messages.find(isResponse);
  if (answer.status >= 400) expect(response?.error, context).toBeDefined();
  if (id === undefined) return;
  expect(response, context).toBeDefined();
  const unknowable =
    answer.status === TOO_LARGE || (response!.error !== undefined && ID_UNKNOWABLE.has(response!.error.code));
  if (!unknowable) expect(response!.id, context).toBe(id);
}

describe('fuzzing Streamable HTTP with raw JSON-RPC', () => {
  let server: ServerChild & { url: URL };
  const children = startedChildren();
  let session: string;
  let before: Diagnostics;

  beforeAll(async () => {
    server = children.add(await spawnHttpServer());
    const init = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
      }),
    });
    session = init.headers.get('mcp-session-id') ?? '';
    await init.text();
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': LEGACY };
    await post(
      server.url,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      headers,
      ANSWER_BOUND_MS,
    );
    before = diagnosticsOf(await callTool(server.url, 'diagnostics', {}));
  }, 60_000);
  afterAll(() => children.stopAll());

  it(
    `answers ${RUNS} generated requests in both protocol versions, each within the bound, and stays up`,
    async () => {
      expect(session).not.toBe('');
      await fc.assert(
        fc.asyncProperty(httpBody, async (request) => {
          const headers = request.modern
            ? modernHeaders(request.method, request.name)
            : { 'mcp-session-id': session, 'mcp-protocol-version': LEGACY };
          const answer = await post(server.url, request.body, headers, ANSWER_BOUND_MS);
          checkHttpAnswer(answer, typeof request.body === 'string' ? answerableId(request.body) : undefined);
        }),
        { numRuns: RUNS },
      );
      expect(server.alive(), server.stderr()).toBe(true);
    },
    SUITE_TIMEOUT_MS,
  );

  it('leaves Object.prototype untouched in the server process', async () => {
    const after = diagnosticsOf(await callTool(server.url, 'diagnostics', {}));
    expect(after.prototypeNames).toEqual(before.prototypeNames);
    expect(after.prototypeSymbols).toBe(before.prototypeSymbols);
    expect(after.polluted).toBe(false);
  });

  it('leaks no slot: the guarded tool still admits exactly maxActive calls at once', async () => {
    const calls = Array.from({ length: HOLD_LIMIT.maxActive + 1 }, () => callTool(server.url, 'hold', { ms: 1_500 }));
    const codes = (await Promise.all(calls)).map((response) => refusalCode(response) ?? 'admitted');
    expect(codes.filter((code) => code === 'admitted')).toHaveLength(HOLD_LIMIT.maxActive);
    expect(codes.filter((code) => code === 'SERVER_BUSY')).toHaveLength(1);
  });
});

/** Connects a stdio peer in one protocol version: `server/discover` (2026-07-28) or the initialize handshake. */
async function handshake(peer: StdioPeer, modern: boolean): Promise<void> {
  if (modern) {
    const discovered = await peer.request('discover', 'server/discover', { _meta: ENVELOPE });
    expect(discovered.result).toBeDefined();
    return;
  }
  const init = await peer.request('init', 'initialize', {
    protocolVersion: LEGACY,
    capabilities: {},
    clientInfo: { name: 'fuzz', version: '1' },
  });
  expect(init.result).toBeDefined();
  peer.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
}

function probeParams(modern: boolean, name: string, args: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, arguments: args, ...(modern ? { _meta: ENVELOPE } : {}) };
}

for (const modern of [true, false]) {
  const era = modern ? '2026-07-28' : '2025-11-25';
  const runs = Math.ceil(RUNS / 2);

  describe(`fuzzing stdio (${era}) with raw lines`, () => {
    let server: ServerChild;
    const children = startedChildren();
    let peer: StdioPeer;
    let before: Diagnostics;
    let probes = 0;

    beforeAll(async () => {
      server = children.add(spawnServer('stdio'));
      peer = new StdioPeer(server.child.stdin, server.child.stdout);
      await handshake(peer, modern);
      before = diagnosticsOf(await peer.request('diag-before', 'tools/call', probeParams(modern, 'diagnostics')));
    }, 60_000);
    afterAll(() => children.stopAll());

    it(
      `answers ${runs} generated lines (and a probe after each) within the bound, writes only JSON-RPC, and stays up`,
      async () => {
        await fc.assert(
          fc.asyncProperty(requestText(modern), async (request: RequestText) => {
            const line = request.body.replace(/[\r\n]/g, ' ');
            // Over the cap, no answer carries the line's id; the probe after it shows the server read past it.
            const id = Buffer.byteLength(line) > STDIO_LINE_CAP_BYTES ? undefined : answerableId(line);
            const answered = id === undefined ? undefined : peer.answer(id, ANSWER_BOUND_MS);
            peer.write(line);
            if (answered) expect(isResponse(await answered)).toBe(true);
            const probe = await peer.request(
              `probe-${probes++}`,
              'tools/list',
              modern ? { _meta: ENVELOPE } : {},
              ANSWER_BOUND_MS,
            );
            expect(probe.result?.tools, JSON.stringify(probe).slice(0, 300)).toBeDefined();
          }),
          { numRuns: runs },
        );
        expect(peer.strayLines).toEqual([]);
        expect(server.alive(), server.stderr()).toBe(true);
      },
      SUITE_TIMEOUT_MS,
    );

    it('leaves Object.prototype untouched and every slot free', async () => {
      const after = diagnosticsOf(await peer.request('diag-after', 'tools/call', probeParams(modern, 'diagnostics')));
      expect(after.prototypeNames).toEqual(before.prototypeNames);
      expect(after.prototypeSymbols).toBe(before.prototypeSymbols);
      expect(after.polluted).toBe(false);
      const holds = Array.from({ length: HOLD_LIMIT.maxActive + 1 }, (_, i) =>
        peer.request(`hold-${i}`, 'tools/call', probeParams(modern, 'hold', { ms: 1_500 })),
      );
      const codes = (await Promise.all(holds)).map((response) => refusalCode(response) ?? 'admitted');
      expect(codes.filter((code) => code === 'admitted')).toHaveLength(HOLD_LIMIT.maxActive);
      expect(codes.filter((code) => code === 'SERVER_BUSY')).toHaveLength(1);
    });
  });
}
