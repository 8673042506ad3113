// The concurrency guard's costs:
// (1) uncontended acquire + release through the store, as the plugin does it
//     on every call (goal < 1 µs);
// (2) memory per waiter with 100,000 waiters queued (goal < 300 bytes): the
//     store's queue entry, with and without an abort listener, and a whole
//     waiting call in the plugin's executor;
// (3) time to drain 100,000 waiters, through the store and through the plugin;
// (4) the plugin's executor wrapper alone, per call;
// (5) in-memory tools/call round trips without and with the plugin, paired A/B.
// Run: cd packages/core && node --expose-gc --conditions=sluice:source --import tsx ../../bench/concurrency.bench.ts
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { pino } from 'pino';
import { MemoryStore, createServer } from '../packages/core/src/index.js';
import type { Admission, CallContext, CallToolResult, Executor, Store } from '../packages/core/src/index.js';
import { concurrency } from '../packages/plugin-concurrency/src/index.js';
import { mutexExecutor } from '../packages/plugin-concurrency/src/intent-mutex.js';
import { limitExecutor } from '../packages/plugin-concurrency/src/limiter.js';
import { nsPerOp, paired, printTable, ratio, writeResult } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const silent = pino({ level: 'silent' });
const WAITERS = 100_000;
const LIMIT = Object.freeze({ maxActive: 5, maxQueue: 20 });
const RESULT: CallToolResult = { content: [{ type: 'text', text: 'ok' }] };
const settle = () => new Promise((resolve) => setImmediate(resolve));

function heap(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

function permitOf(admission: Admission) {
  if (!admission.admitted) throw new Error('shed');
  return admission.permit;
}

// (1) Uncontended acquire + release.
const iterations = quick ? 200_000 : 2_000_000;
const store = new MemoryStore();
const fastPath = nsPerOp(() => store.semaphore('bench/slots', LIMIT).tryAcquire()!.release(), iterations);
// More keys than the store keeps idle, so each call builds a semaphore and another is collected.
const manyKeys = Array.from({ length: 1_000 }, (_, i) => `bench/many/${i}`);
let turn = 0;
const churn = nsPerOp(
  () =>
    store
      .semaphore(manyKeys[turn++ % manyKeys.length]!, LIMIT)
      .tryAcquire()!
      .release(),
  iterations,
);
const lockPath = nsPerOp(() => store.lock('bench/lock').tryAcquire()!.release(), iterations);
async function asyncNsPerOp(fn: () => Promise<unknown>, n: number): Promise<number> {
  for (let i = 0; i < Math.min(n, 50_000); i++) await fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / n;
}
const acquirePath = await asyncNsPerOp(
  async () => permitOf(await store.semaphore('bench/async', LIMIT).acquire()).release(),
  iterations / 4,
);
const uncontended = [
  { path: 'semaphore(key).tryAcquire() + release, one hot key (plugin fast path)', 'ns/op': fastPath },
  { path: 'same, 1,000 keys in turn (built each time, idle ones collected)', 'ns/op': churn },
  { path: 'lock(key).tryAcquire() + release', 'ns/op': lockPath },
  { path: 'await semaphore(key).acquire() + release (promise path)', 'ns/op': acquirePath },
];
printTable('(1) Uncontended acquire + release through the Store (goal < 1000 ns)', uncontended);

// (2) Memory per waiter, 100,000 waiting.
async function queueBytes(withSignals: boolean): Promise<number> {
  const s: Store = new MemoryStore();
  const options = { maxActive: 1, maxQueue: WAITERS };
  const holder = s.semaphore('mem', options).tryAcquire()!;
  const controllers = withSignals ? Array.from({ length: WAITERS }, () => new AbortController()) : [];
  const signals = controllers.map((c) => c.signal); // the request's signal exists before the call waits
  const waits = new Array<Promise<Admission>>(WAITERS);
  const before = heap();
  for (let i = 0; i < WAITERS; i++) waits[i] = s.semaphore('mem', options).acquire(signals[i]);
  const bytes = (heap() - before) / WAITERS - 8; // less the slot in `waits`
  holder.release();
  for (const w of waits) permitOf(await w).release();
  return bytes;
}
async function pluginBytes(): Promise<number> {
  const s = new MemoryStore();
  const door = { open: () => {} };
  const opened = new Promise<void>((resolve) => (door.open = resolve));
  const next: Executor = async () => (await opened, RESULT);
  const executor = limitExecutor(next, {
    store: s,
    tool: 'mem',
    limit: { maxActive: 1, maxQueue: WAITERS },
    retryAfterMs: 1000,
  });
  const contexts = Array.from(
    { length: WAITERS + 1 },
    () => ({ signal: new AbortController().signal, logger: silent }) as unknown as CallContext,
  );
  const calls = new Array<Promise<CallToolResult>>(WAITERS + 1);
  calls[0] = executor(contexts[0]!);
  const before = heap();
  for (let i = 1; i <= WAITERS; i++) calls[i] = executor(contexts[i]!);
  const bytes = (heap() - before) / WAITERS - 8;
  door.open();
  await Promise.all(calls);
  return bytes;
}
const memory = [
  { waiter: 'store queue entry, no signal', 'bytes/waiter': await queueBytes(false) },
  { waiter: 'store queue entry + abort listener on its own signal', 'bytes/waiter': await queueBytes(true) },
  {
    waiter: 'whole waiting call in the plugin executor (entry, listener, async frames)',
    'bytes/waiter': await pluginBytes(),
  },
];
printTable(`(2) Memory per waiter, ${WAITERS.toLocaleString('en')} waiting (goal < 300 bytes)`, memory);

// (3) Drain time.
async function drainStore(): Promise<number> {
  const s = new MemoryStore();
  const options = { maxActive: 1, maxQueue: WAITERS };
  const holder = s.semaphore('drain', options).tryAcquire()!;
  const waits = Array.from({ length: WAITERS }, () =>
    s
      .semaphore('drain', options)
      .acquire()
      .then((a) => permitOf(a).release()),
  );
  const t0 = process.hrtime.bigint();
  holder.release();
  await Promise.all(waits);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
async function drainPlugin(): Promise<number> {
  const s = new MemoryStore();
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let first = true;
  const next: Executor = async () => {
    if (first) {
      first = false;
      await held;
    }
    return RESULT;
  };
  const executor = limitExecutor(next, {
    store: s,
    tool: 'drain',
    limit: { maxActive: 1, maxQueue: WAITERS },
    retryAfterMs: 1000,
  });
  // Each call has its own signal, as each request does.
  const contexts = Array.from(
    { length: WAITERS + 1 },
    () => ({ signal: new AbortController().signal, logger: silent }) as unknown as CallContext,
  );
  const calls = contexts.map((ctx) => executor(ctx));
  await settle();
  const t0 = process.hrtime.bigint();
  release();
  await Promise.all(calls);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
await drainStore(); // warm up
const drains = [
  { through: 'the store (acquire, release)', 'ms for 100,000': await drainStore() },
  { through: 'the plugin executor (queued call runs, returns, releases)', 'ms for 100,000': await drainPlugin() },
];
for (const d of drains) Object.assign(d, { 'µs per waiter': (d['ms for 100,000'] * 1000) / WAITERS });
printTable('(3) Draining 100,000 waiters', drains);

// (4) The executor wrapper alone.
const wrapStore = new MemoryStore();
const inner: Executor = () => Promise.resolve(RESULT);
const limited = limitExecutor(inner, { store: wrapStore, tool: 'w', limit: LIMIT, retryAfterMs: 1000 });
const locked = limitExecutor(
  mutexExecutor(inner, { store: wrapStore, tool: 'w', keyArgs: ['id'], retryAfterMs: 1000 }),
  {
    store: wrapStore,
    tool: 'w',
    limit: LIMIT,
    retryAfterMs: 1000,
  },
);
const wrapCtx = {
  signal: new AbortController().signal,
  logger: silent,
  arguments: { id: 'inv_1' },
  state: new Map(),
} as unknown as CallContext;
const n4 = iterations / 4;
const bare = await asyncNsPerOp(() => inner(wrapCtx), n4);
const wrapped = await asyncNsPerOp(() => limited(wrapCtx), n4);
const wrappedMutex = await asyncNsPerOp(() => locked(wrapCtx), n4);
const wrappers = [
  { executor: 'inner executor alone', 'ns/call': bare, 'added ns': 0 },
  { executor: 'limit wrapper', 'ns/call': wrapped, 'added ns': wrapped - bare },
  { executor: 'limit + mutex (one key arg)', 'ns/call': wrappedMutex, 'added ns': wrappedMutex - bare },
];
printTable('(4) Executor wrapper per call, uncontended', wrappers);

// (5) Round trips.
async function client(plugins: boolean, policy: 'none' | 'limit' | 'limit+mutex'): Promise<Client> {
  const server = createServer({ name: 'bench', version: '1', logger: silent, plugins: plugins ? [concurrency()] : [] });
  const guard =
    policy === 'limit'
      ? { annotations: { readOnlyHint: true }, policy: { concurrency: { maxActive: 64, maxQueue: 64 } } }
      : policy === 'limit+mutex'
        ? { policy: { concurrency: { maxActive: 64, maxQueue: 64 }, destructive: true, mutex: { keyArgs: ['id'] } } }
        : { annotations: { readOnlyHint: true } };
  server.tool({ name: 'op', ...guard, handler: () => RESULT });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(a);
  return c;
}
const clients = {
  a: await client(false, 'none'),
  b: await client(true, 'none'),
  c: await client(true, 'limit'),
  d: await client(true, 'limit+mutex'),
};
const call = (c: Client) => () => c.callTool({ name: 'op', arguments: { id: 'inv_1' } });
const trips = await paired(
  [
    { name: 'a: Sluice, no plugins', run: call(clients.a) },
    { name: 'b: + concurrency, tool not guarded', run: call(clients.b) },
    { name: 'c: + concurrency, limit 64/64', run: call(clients.c) },
    { name: 'd: + concurrency, limit + intent mutex', run: call(clients.d) },
  ],
  quick ? { warmup: 1_000, rounds: 4, perRound: 500 } : { warmup: 5_000, rounds: 24, perRound: 1_000 },
);
const base = trips[0]!;
printTable(
  '(5) In-memory tools/call round trip, paired A/B',
  trips.map((s) => ({
    variant: s.name,
    'p50 µs': s.p50Us,
    'mean µs': s.meanUs,
    'p99 µs': s.p99Us,
    'p50 - a µs': s.p50Us - base.p50Us,
    'mean - a µs': s.meanUs - base.meanUs,
    'mean / a': ratio(s.meanUs, base.meanUs),
  })),
);
for (const c of Object.values(clients)) await c.close();

writeResult('concurrency', {
  uncontended,
  memory,
  drains,
  wrappers,
  roundTrips: trips,
  goals: { acquireReleaseNs: 1_000, bytesPerWaiter: 300 },
});
