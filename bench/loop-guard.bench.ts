// The loop guard's per-call cost for incoming stacks of 0, 4 and 16 entries:
// (1) its preCall tap alone, in ns per call, net of building the context;
// (2) in-memory tools/call round trips, a Sluice server without plugins and one
//     with loopGuard(), alternating round by round in this process.
// maxDepth is 32 here so that the 16-entry stack passes (the default, 16, refuses it).
// Run: cd packages/core && node --conditions=sluice:source --import tsx ../../bench/loop-guard.bench.ts
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { z } from 'zod';
import { MetaKey, createServer } from '../packages/core/src/index.js';
import { emptyMeta } from '../packages/core/src/internal.js';
import type { CallContext, Meta, Plugin, SluiceTool } from '../packages/core/src/index.js';
import { loopGuard } from '../packages/plugin-loop-guard/src/index.js';
import { createCallGuard } from '../packages/plugin-loop-guard/src/call-guard.js';
import { nsPerOp, paired, printTable, ratio, writeResult } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const SIZES = [0, 4, 16] as const;
const MAX_DEPTH = 32;

/** A stack as it arrives from another service: the two keys hold equal but distinct arrays. */
function wireMeta(size: number): Record<string, unknown> {
  if (size === 0) return {};
  const entries = () => Array.from({ length: size }, (_, i) => `service${i % 3}.tool${i}`);
  return { [MetaKey.CALL_STACK]: entries(), callStack: entries() };
}

// (1) The tap alone.
const tool: SluiceTool = Object.freeze({
  name: 'serviceA.run',
  definition: { name: 'serviceA.run', inputSchema: { type: 'object' as const } },
  policy: {},
  source: { kind: 'local' as const },
});
const guard = createCallGuard({ maxDepth: MAX_DEPTH, originService: undefined, audit: false });
const noop = (ctx: CallContext): Meta => ctx.outgoingMeta;
function contextFor(meta: Meta): () => CallContext {
  const incoming = Object.assign(emptyMeta(), meta);
  return () => ({ tool, meta: incoming, outgoingMeta: emptyMeta() }) as unknown as CallContext;
}
const iterations = quick ? 200_000 : 1_000_000;
const median = (values: number[]): number => values.sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
const direct = SIZES.map((size) => {
  const make = contextFor(wireMeta(size));
  if (guard(make()) !== undefined) throw new Error(`the guard refused a ${size}-entry stack`);
  // Alternate baseline and guard several times; the medians resist the noise of a shared machine.
  const base: number[] = [];
  const total: number[] = [];
  for (let rep = 0; rep < (quick ? 3 : 7); rep++) {
    base.push(nsPerOp(() => noop(make()), iterations));
    total.push(nsPerOp(() => guard(make()), iterations));
  }
  return {
    entries: size,
    'tap ns/call': Math.round((median(total) - median(base)) * 10) / 10,
    'context ns': Math.round(median(base) * 10) / 10,
  };
});
printTable('loopGuard preCall tap alone (net of building the context)', direct);

// (2) Paired round trips.
const input = z.object({ text: z.string() });
async function clientOf(plugins: Plugin[]): Promise<Client> {
  const server = createServer({ name: 'bench', version: '1', plugins, logger: pino({ level: 'silent' }) });
  server.tool({ name: 'echo', inputSchema: input, handler: ({ text }) => ({ content: [{ type: 'text', text }] }) });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(a);
  return client;
}
const bare = await clientOf([]);
const guarded = await clientOf([loopGuard({ maxDepth: MAX_DEPTH })]);
const call = (client: Client, size: number) => {
  const meta = wireMeta(size);
  return () => client.callTool({ name: 'echo', arguments: { text: 'hi' }, _meta: meta });
};
const variants = SIZES.flatMap((size) => [
  { name: `no plugin, ${size} entries`, run: call(bare, size) },
  { name: `loopGuard, ${size} entries`, run: call(guarded, size) },
]);
const stats = await paired(
  variants,
  quick ? { warmup: 1_000, rounds: 4, perRound: 500 } : { warmup: 5_000, rounds: 20, perRound: 1_000 },
);
printTable(
  'In-memory tools/call round trip',
  stats.map((s) => ({ variant: s.name, 'p50 µs': s.p50Us, 'p99 µs': s.p99Us, 'mean µs': s.meanUs })),
);
const roundTrip = SIZES.map((size, i) => {
  const without = stats[2 * i]!;
  const withGuard = stats[2 * i + 1]!;
  return {
    entries: size,
    'added µs (mean)': Math.round((withGuard.meanUs - without.meanUs) * 1000) / 1000,
    'added µs (p50)': Math.round((withGuard.p50Us - without.p50Us) * 1000) / 1000,
    'ratio (p50)': ratio(withGuard.p50Us, without.p50Us),
  };
});
printTable('Added by loopGuard per round trip (goal: under 1 µs for 16 entries)', roundTrip);
writeResult('loop-guard', { maxDepth: MAX_DEPTH, direct, roundTrip, stats, goal: { entries: 16, addedUs: 1 } });
await bare.close();
await guarded.close();
