// Code mode's costs, in one process, against direct calls measured in the same run:
// Scripts run in worker threads (a pool): a start is a message to a warm worker, and each call from a
// script crosses to the main thread and back; process.cpuUsage() counts the workers' CPU too.
// (1) starting a script: a fresh QuickJS runtime and context, the prelude, the bindings
//     (goal < 10 ms): `execute_code` of `return 1` against a direct `server.call()` of a tool;
// (2) each tool call from inside a script (goal < 50 µs over a direct call): a script
//     making 1,000 calls, less the empty script, per call, against 1,000 direct `server.call()`s;
// (3) building the bindings of 100 tools, and rendering their declaration file.
// Run: node --expose-gc --conditions=sluice:source --import tsx bench/code-mode.bench.ts
import os from 'node:os';
import { pino } from 'pino';
import { createServer } from '../packages/core/src/index.js';
import type { CallToolResult, SluiceTool, Tool } from '../packages/core/src/index.js';
import { buildBindings, codeMode, declarations } from '../packages/plugin-code-mode/src/index.js';
import { nsPerOp, paired, printTable, ratio, writeResult } from './lib.js';

const quick = process.env.BENCH_QUICK === '1';
const CALLS = 1_000;
const silent = pino({ level: 'silent' });

const server = createServer({
  name: 'bench',
  version: '1',
  logger: silent,
  plugins: [codeMode({ limits: { maxToolCalls: CALLS } })],
});
server.tool({ name: 'ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
await server.ready();

const check = (result: CallToolResult): CallToolResult => {
  if (result.isError) throw new Error(JSON.stringify(result));
  return result;
};
const direct = async () => check(await server.call('ping'));
const directMany = async () => {
  for (let i = 0; i < CALLS; i++) check(await server.call('ping'));
};
const empty = async () => check(await server.call('execute_code', { code: 'return 1' }));
const many = async () =>
  check(
    await server.call('execute_code', { code: `for (let i = 0; i < ${CALLS}; i++) await local.ping(); return 1;` }),
  );

// (1) Start.
const [start, call] = await paired(
  [
    { name: 'execute_code: return 1', run: empty },
    { name: 'direct server.call(ping)', run: direct },
  ],
  { warmup: quick ? 20 : 200, rounds: quick ? 4 : 10, perRound: quick ? 20 : 100 },
);
const startMs = (start!.p50Us - call!.p50Us) / 1000;
printTable('(1) Starting a script (in-process, p50)', [
  { variant: start!.name, 'p50 µs': start!.p50Us, 'p99 µs': start!.p99Us },
  { variant: call!.name, 'p50 µs': call!.p50Us, 'p99 µs': call!.p99Us },
  { variant: 'script start (difference)', 'p50 µs': startMs * 1000, 'p99 µs': '' },
]);

// (2) Per call from inside a script.
const [script, baseline, loop] = await paired(
  [
    { name: `execute_code: ${CALLS} calls`, run: many },
    { name: 'execute_code: return 1', run: empty },
    { name: `${CALLS} direct server.call(ping)`, run: directMany },
  ],
  { warmup: quick ? 3 : 10, rounds: quick ? 3 : 10, perRound: quick ? 3 : 10 },
);
const perCallScript = (script!.p50Us - baseline!.p50Us) / CALLS;
const perCallDirect = loop!.p50Us / CALLS;
const overheadUs = perCallScript - perCallDirect;
printTable(`(2) One tool call from inside a script (p50 of ${CALLS}-call runs)`, [
  { variant: 'from a script, per call', µs: perCallScript },
  { variant: 'direct server.call(), per call', µs: perCallDirect },
  { variant: 'overhead per call', µs: overheadUs },
  { variant: 'script / direct', µs: ratio(perCallScript, perCallDirect) },
]);

// (2b) The same in CPU time (user + system), which a loaded machine does not inflate by descheduling us.
// The three are sampled in turn, round by round, so that drift in the machine's load hits all of them.
async function cpuOnce(run: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}
const median = (samples: number[]): number =>
  samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? Number.NaN;
const cpuTimes = quick ? 5 : 20;
const scriptSamples: number[] = [];
const emptySamples: number[] = [];
const directSamples: number[] = [];
for (let round = 0; round < cpuTimes; round++) {
  scriptSamples.push(await cpuOnce(many));
  for (let i = 0; i < 10; i++) emptySamples.push(await cpuOnce(empty));
  directSamples.push(await cpuOnce(directMany));
}
const cpuScript = median(scriptSamples);
const cpuEmpty = median(emptySamples);
const cpuDirect = median(directSamples);
const cpuPerCallScript = (cpuScript - cpuEmpty) / CALLS;
const cpuPerCallDirect = cpuDirect / CALLS;
printTable(`(2b) CPU time of one tool call (median of ${cpuTimes} ${CALLS}-call runs)`, [
  { variant: 'from a script, per call', 'CPU µs': cpuPerCallScript },
  { variant: 'direct server.call(), per call', 'CPU µs': cpuPerCallDirect },
  { variant: 'overhead per call', 'CPU µs': cpuPerCallScript - cpuPerCallDirect },
  { variant: 'script start (empty script less one direct call)', 'CPU µs': cpuEmpty - cpuPerCallDirect },
]);

// (3) Bindings of 100 tools.
const tools: Tool[] = Array.from({ length: 100 }, (_, i) => ({
  name: `svc_tool_${i}`,
  description: `Tool number ${i}. It does one thing.`,
  inputSchema: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      limit: { type: 'integer' },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['id'],
  },
}));
const sources = new Map<string, SluiceTool>(
  tools.map((t) => [
    t.name,
    {
      name: t.name,
      definition: t,
      policy: {},
      source: { kind: 'upstream', upstream: 'svc', originalName: t.name.slice(4), trusted: false },
    },
  ]),
);
const build = () =>
  buildBindings({ tools, toolOf: (n) => sources.get(n), localServer: 'local', exclude: new Set<string>() });
const buildUs = nsPerOp(build, quick ? 200 : 2_000) / 1000;
const bound = build();
const renderUs =
  nsPerOp(() => declarations('svc', bound.servers.get('svc')!, 'get_tool_docs'), quick ? 200 : 2_000) / 1000;
printTable('(3) Bindings of 100 tools', [
  { step: 'group and name (once per distinct tool list)', µs: buildUs },
  { step: 'render servers/svc.d.ts (on read_tool_file)', µs: renderUs },
]);

// Per-call goal judged on CPU time: on a shared machine, wall time of a long script includes time descheduled.
const cpuOverheadUs = cpuPerCallScript - cpuPerCallDirect;
const goals = { startMs: startMs < 10, perCallOverheadUs: cpuOverheadUs < 50 };
process.stdout.write(
  `\nscript start ${startMs.toFixed(3)} ms (goal < 10 ms: ${goals.startMs ? 'met' : 'missed'}); ` +
    `per-call overhead ${cpuOverheadUs.toFixed(1)} µs CPU, ${overheadUs.toFixed(1)} µs wall ` +
    `(goal < 50 µs: ${goals.perCallOverheadUs ? 'met' : 'missed'}); load average ${os.loadavg()[0]?.toFixed(1)}\n`,
);
const file = writeResult('code-mode', {
  start: { script: start, direct: call, startMs },
  perCall: {
    script,
    baseline,
    direct: loop,
    perCallScriptUs: perCallScript,
    perCallDirectUs: perCallDirect,
    overheadUs,
  },
  bindings: { buildUs, renderUs },
  goals,
});
process.stdout.write(`wrote ${file}\n`);
await server.close();
