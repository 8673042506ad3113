// The egress guard's costs:
// (1) counting UTF-8 bytes: the code-unit counter against Buffer.byteLength, and
//     the hybrid the guard uses, in ns per string;
// (2) the postCall tap on a small result under the limit, alone (goal < 1 µs),
//     and in-memory tools/call round trips without and with the guard, alternating;
// (3) capping a 30 MB result to 2 MB: time (goal < 50 ms) and peak extra memory
//     (goal < 2x the kept size), against encoding the whole text as a naive guard would.
// Run: cd packages/core && node --expose-gc --conditions=sluice:source --import tsx ../../bench/egress.bench.ts
import { PerformanceObserver } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { createServer } from '../packages/core/src/index.js';
import { emptyMeta } from '../packages/core/src/internal.js';
import type { CallContext, CallToolResult, PluginApi, SluiceTool } from '../packages/core/src/index.js';
import { egress } from '../packages/plugin-egress/src/index.js';
import { byteLength, utf8Length } from '../packages/plugin-egress/src/utf8.js';
import { nsPerOp, paired, printTable, ratio, writeResult } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const MiB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const silent = pino({ level: 'silent' });
// Flat strings, as a handler or the SDK's JSON parser produces them.
const flat = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');

// (1) Counting.
const strings = {
  'ASCII, 4 chars': flat('text'),
  'ASCII, 16 chars': flat('hello, world! ok'),
  'ASCII, 100 chars': flat('a'.repeat(100)),
  'CJK, 100 chars': flat('日本語'.repeat(34).slice(0, 100)),
  'ASCII, 1 MB': flat('x'.repeat(MiB)),
  'mixed, 1 MB': flat('é日😀a'.repeat(MiB / 5)),
};
const counting = Object.entries(strings).map(([name, s]) => {
  const iterations = s.length > 1_000 ? (quick ? 20 : 200) : quick ? 200_000 : 2_000_000;
  const js = nsPerOp(() => utf8Length(s), iterations);
  const native = nsPerOp(() => Buffer.byteLength(s, 'utf8'), iterations);
  const guard = nsPerOp(() => byteLength(s), iterations);
  return {
    string: name,
    'code-unit counter ns': js,
    'Buffer.byteLength ns': native,
    'guard byteLength ns': guard,
    'counter / native': ratio(js, native),
  };
});
printTable('(1) Counting UTF-8 bytes, ns per string', counting);

// (2a) The postCall tap alone, on a small result under the limit.
type PostCall = (result: CallToolResult, ctx: CallContext) => CallToolResult;
function postCallTap(limit: number): PostCall {
  let tap: PostCall | undefined;
  const hooks = {
    import: { tap: () => {} },
    featureResult: { tap: () => {} },
    postCall: { tap: (_o: unknown, fn: PostCall) => (tap = fn) },
  };
  egress({ maxPayloadBytes: limit }).apply({ hooks, logger: silent, mode: 'enforce' } as unknown as PluginApi);
  return tap!;
}
const tool: SluiceTool = Object.freeze({
  name: 'search',
  definition: { name: 'search', inputSchema: { type: 'object' as const } },
  policy: {},
  source: { kind: 'local' as const },
});
const ctx = { tool, meta: emptyMeta(), logger: silent } as unknown as CallContext;
const tap = postCallTap(2 * MiB);
const small: CallToolResult = {
  content: [
    {
      type: 'text',
      text: 'Found 3 orders: #1041 (shipped), #1042 (pending), #1043 (cancelled). Use offset=3 for more.',
    },
  ],
  _meta: { 'dev.sluice/nextTool': { name: 'orders_search', arguments: { offset: 3 } } },
};
if (tap(small, ctx) !== small) throw new Error('a small result must come back as the same object');
const tapNs = nsPerOp(() => tap(small, ctx), quick ? 200_000 : 2_000_000);
const textOnly: CallToolResult = { content: small.content };
const tapNsText = nsPerOp(() => tap(textOnly, ctx), quick ? 200_000 : 2_000_000);
// A yardstick from the same run, since the machine's speed varies: what serializing the result costs.
const stringifyNs = nsPerOp(() => JSON.stringify(small), quick ? 200_000 : 2_000_000);
printTable('(2a) postCall tap on a small result under the limit (goal < 1000 ns)', [
  {
    result: 'text + _meta.nextTool (~150 B)',
    'ns per call': tapNs,
    'vs JSON.stringify of it': ratio(tapNs, stringifyNs),
  },
  {
    result: 'one text block (~100 B)',
    'ns per call': tapNsText,
    'vs JSON.stringify of it': ratio(tapNsText, stringifyNs),
  },
  { result: 'JSON.stringify(text + _meta), for scale', 'ns per call': stringifyNs, 'vs JSON.stringify of it': 1 },
]);

// (2b) Round trips: Sluice without and with the guard.
async function client(withGuard: boolean): Promise<Client> {
  const server = createServer({
    name: 'bench',
    version: '1',
    logger: silent,
    plugins: withGuard ? [egress({ maxPayloadBytes: 2 * MiB })] : [],
  });
  server.tool({ name: 'search', handler: () => small });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(a);
  return c;
}
const bare = await client(false);
const guarded = await client(true);
const call = (c: Client) => () => c.callTool({ name: 'search', arguments: {} });
const trips = await paired(
  [
    { name: 'a: Sluice, no plugins', run: call(bare) },
    { name: 'b: Sluice + egress (2 MB)', run: call(guarded) },
  ],
  quick ? { warmup: 1_000, rounds: 4, perRound: 500 } : { warmup: 5_000, rounds: 20, perRound: 1_000 },
);
const [a, b] = trips as [(typeof trips)[0], (typeof trips)[0]];
printTable(
  '(2b) In-memory tools/call round trip, small result',
  trips.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'mean µs': s.meanUs })),
);
const tripRatios = {
  'b/a p50': ratio(b.p50Us, a.p50Us),
  'b/a mean': ratio(b.meanUs, a.meanUs),
  'b-a mean µs': Math.round((b.meanUs - a.meanUs) * 1000) / 1000,
};
printTable('(2b) Ratio', [tripRatios]);
await bare.close();
await guarded.close();

// (3) Capping 30 MB to 2 MB. Peak extra memory is what the heap (and array
// buffers) grew by across the call, counted only over calls that no garbage
// collection interrupted, so that nothing allocated was collected unseen.
const gcWindows: { start: number; end: number }[] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    gcWindows.push({ start: entry.startTime, end: entry.startTime + entry.duration });
});
observer.observe({ entryTypes: ['gc'] });
const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
const used = (): number => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const LOG = 'GET /api/orders?page=… 200 — 12 ms 🚀\n';
const rows = Array.from({ length: 300_000 }, (_, i) => ({
  id: i,
  level: 'info',
  message: `order ${i} shipped in ${i % 97} ms`,
  at: '2025-01-01T00:00:00.000Z',
}));
const cases: Record<string, () => CallToolResult> = {
  'text, 30 MB': () => ({
    content: [{ type: 'text', text: flat(LOG.repeat(Math.ceil((30 * MiB) / Buffer.byteLength(LOG)))) }],
  }),
  'text + structuredContent, 2 x 30 MB': () => {
    const json = flat(JSON.stringify(rows));
    return { content: [{ type: 'text', text: json }], structuredContent: { rows } };
  },
};
const limit = 2 * MiB;
const big = postCallTap(limit);
const capping: Record<string, string | number>[] = [];
for (const [name, make] of Object.entries(cases)) {
  const input = make();
  const inputText = (input.content[0] as { text: string }).text;
  big(input, ctx); // warm up
  const times: number[] = [];
  let peak = 0;
  let cleanRuns = 0;
  let keptBytes = 0;
  for (let r = 0; r < (quick ? 5 : 20); r++) {
    gc();
    await settle();
    const before = used();
    const t0 = performance.now();
    const output = big(input, ctx);
    const t1 = performance.now();
    const grew = used() - before;
    times.push(t1 - t0);
    await settle(); // let the observer report collections
    if (!gcWindows.some((w) => w.end >= t0 && w.start <= t1)) {
      cleanRuns++;
      peak = Math.max(peak, grew);
    }
    keptBytes = (output._meta?.['dev.sluice/egress'] as { keptBytes: number }).keptBytes;
  }
  // The naive guard: encode everything, cut the bytes, decode the prefix.
  gc();
  const naiveBefore = used();
  const n0 = process.hrtime.bigint();
  const encoded = Buffer.from(inputText, 'utf8');
  const naiveText = new TextDecoder().decode(encoded.subarray(0, limit));
  const naiveMs = Number(process.hrtime.bigint() - n0) / 1e6;
  const naivePeak = used() - naiveBefore;
  if (naiveText.length === 0) throw new Error('unreachable');
  times.sort((x, y) => x - y);
  if (cleanRuns === 0) throw new Error(`every run of "${name}" was interrupted by a collection: peak memory unknown`);
  capping.push({
    result: name,
    'median ms': times[Math.floor(times.length / 2)]!,
    'max ms': times.at(-1)!,
    'kept MB': keptBytes / MiB,
    'peak extra MB': peak / MiB,
    'peak / kept': ratio(peak, keptBytes),
    'runs without gc': cleanRuns,
    'naive ms': naiveMs,
    'naive peak MB': naivePeak / MiB,
  });
}
observer.disconnect();
printTable('(3) Capping a 30 MB result to 2 MB (goals: < 50 ms, peak extra < 2x kept)', capping);

writeResult('egress', {
  counting,
  postCallTap: { smallWithMetaNs: tapNs, smallTextNs: tapNsText, jsonStringifyNs: stringifyNs, goalNs: 1_000 },
  roundTrips: { stats: trips, ratios: tripRatios },
  capping,
  goals: { capMs: 50, peakOverKept: 2 },
});
