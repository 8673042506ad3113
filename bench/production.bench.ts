// The gateway measured the way it runs: each target in a process of its own over loopback HTTP, this
// process the only load, at 1, 16 and 64 calls in flight, targets alternating round by round (who goes
// first rotates), CPU per call read from each target's own process.cpuUsage().
//
// Targets, all answering tools/call echo:
//   floor        node:http answering a fixed JSON-RPC body: the machine's limit
//   relay        a byte relay (node:http in, keep-alive agent out) in front of the HTTP upstream
//   bare         the bare SDK proxy: SDK client to the upstream, SDK server (one session) in front
//   sluice-none  createGateway (what `sluice serve` runs), no plugins, telemetry as configured by default
//   sluice-all   the same with every plugin on, at settings that let the calls through
//   sdk-*        sluice-* with `transport: sdk` on the upstream connection (the SDK's own client transport)
//   *-stdio      the proxies over a stdio upstream (a child of the proxy)
// The HTTP upstream is an SDK echo server in its own process. Ratios compare targets of this one run.
// Run: pnpm --filter @sluice/bench bench production   (BENCH_QUICK=1 for a run of about a minute;
// BENCH_ROUNDS and BENCH_PER_ROUND override the rounds and the calls per round)
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { printTable, ratio, writeResult } from './lib.js';
import { openSession } from './production/load.js';
import { measure, settingsFromEnv } from './production/measure.js';

const TARGET = fileURLToPath(new URL('./production/target.ts', import.meta.url));
const settings = settingsFromEnv({ warmup: 2_000, rounds: 8, perRound: 1_500, concurrency: [1, 16, 64] });
const quick = settings.quick;
const sdkVariants = process.env.BENCH_SDK_TRANSPORT !== '0';
// BENCH_STDIO_ONLY=1: the floor and the stdio rows only. BENCH_BASELINE=<checkout>: the same stdio rows of
// another checkout of this repository (its bench/production/target.ts, run in the same rounds), as base-*-stdio.
const stdioOnly = process.env.BENCH_STDIO_ONLY === '1';
const baseline = process.env.BENCH_BASELINE
  ? fileURLToPath(new URL('bench/production/target.ts', pathToFileURL(`${process.env.BENCH_BASELINE}/`)))
  : undefined;

interface Target {
  readonly name: string;
  readonly child: ChildProcess;
  readonly url: URL;
  cpu(): Promise<number>;
}

async function startTarget(name: string, args: string[], script = TARGET): Promise<Target> {
  const child = fork(script, args, {
    execArgv: ['--conditions=sluice:source', '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  // Each distinct warning once, labelled with the target that printed it.
  const seen = new Set<string>();
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    for (const line of text.split('\n')) {
      const key = line.replace(/\d+/g, 'N').trim();
      if (key === '' || seen.has(key)) continue;
      seen.add(key);
      process.stderr.write(`[${name}] ${line}\n`);
    }
  });
  const url = await new Promise<URL>((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve(new URL(m.url)));
    child.once('exit', (code) => reject(new Error(`target ${name} exited with ${code} before listening`)));
  });
  const cpu = () =>
    new Promise<number>((resolve) => {
      child.once('message', (m: { cpu: NodeJS.CpuUsage }) => resolve(m.cpu.user + m.cpu.system));
      child.send('cpu');
    });
  return { name, child, url, cpu };
}

const upstream = await startTarget('upstream', ['upstream']);
const specs: [string, string[], string?][] = [
  ['floor', ['floor']],
  ...(stdioOnly
    ? []
    : ([
        ['relay', ['relay', upstream.url.href]],
        ['bare', ['bare', upstream.url.href]],
        ['sluice-none', ['sluice-none', upstream.url.href]],
        ['sluice-all', ['sluice-all', upstream.url.href]],
      ] as [string, string[]][])),
  ...(sdkVariants && !stdioOnly
    ? ([
        ['sdk-none', ['sluice-none', upstream.url.href, 'sdk']],
        ['sdk-all', ['sluice-all', upstream.url.href, 'sdk']],
      ] as [string, string[]][])
    : []),
  ['bare-stdio', ['bare', 'stdio']],
  ['sluice-none-stdio', ['sluice-none', 'stdio']],
  ['sluice-all-stdio', ['sluice-all', 'stdio']],
  ...(baseline
    ? ([
        ['base-none-stdio', ['sluice-none', 'stdio'], baseline],
        ['base-all-stdio', ['sluice-all', 'stdio'], baseline],
      ] as [string, string[], string][])
    : []),
];
const targets: Target[] = [];
for (const [name, args, script] of specs) targets.push(await startTarget(name, args, script));
const maxInFlight = Math.max(...settings.concurrency);
const sessions = await Promise.all(targets.map((t) => openSession(t.url, maxInFlight)));

const { results, rows } = await measure(targets, sessions, settings);
printTable('tools/call over loopback HTTP, each target in its own process', rows);

type Goal = { readonly label: string; readonly value: number; readonly goal: string; readonly met: boolean };
const goals: Goal[] = [];
const add = (label: string, value: number, goal: string, met: (v: number) => boolean) => {
  // A ratio whose targets were not measured in this run (BENCH_STDIO_ONLY) is left out.
  if (!Number.isNaN(value)) goals.push({ label, value, goal, met: met(value) });
};
for (const inFlight of settings.concurrency) {
  const at = results[String(inFlight)]!;
  const missing = { p50Us: Number.NaN, p99Us: Number.NaN, callsPerSec: Number.NaN, cpuUsPerCall: Number.NaN };
  const g = (name: string) => at[name] ?? missing;
  add(`${inFlight}: none/bare p50`, ratio(g('sluice-none').p50Us, g('bare').p50Us), '<= 0.70', (v) => v <= 0.7);
  const tput = ratio(g('sluice-none').callsPerSec, g('bare').callsPerSec);
  if (inFlight > 1) add(`${inFlight}: none/bare calls/s`, tput, '>= 1.5', (v) => v >= 1.5);
  add(
    `${inFlight}: none/bare CPU per call`,
    ratio(g('sluice-none').cpuUsPerCall, g('bare').cpuUsPerCall),
    '<= 0.6',
    (v) => v <= 0.6,
  );
  add(`${inFlight}: all/none p50`, ratio(g('sluice-all').p50Us, g('sluice-none').p50Us), '<= 1.10', (v) => v <= 1.1);
  add(`${inFlight}: all/bare p50`, ratio(g('sluice-all').p50Us, g('bare').p50Us), '(info)', () => true);
  add(`${inFlight}: bare/floor p50`, ratio(g('bare').p50Us, g('floor').p50Us), '(info)', () => true);
  add(`${inFlight}: relay/bare p50`, ratio(g('relay').p50Us, g('bare').p50Us), '(info)', () => true);
  if (sdkVariants)
    add(`${inFlight}: sdk-none/bare p50`, ratio(g('sdk-none').p50Us, g('bare').p50Us), '(info)', () => true);
  add(
    `${inFlight}: stdio none/bare p50`,
    ratio(g('sluice-none-stdio').p50Us, g('bare-stdio').p50Us),
    '<= 1.0',
    (v) => v <= 1,
  );
  add(
    `${inFlight}: stdio none/base p50`,
    ratio(g('sluice-none-stdio').p50Us, g('base-none-stdio').p50Us),
    '(info)',
    () => true,
  );
  add(
    `${inFlight}: stdio all/base p50`,
    ratio(g('sluice-all-stdio').p50Us, g('base-all-stdio').p50Us),
    '(info)',
    () => true,
  );
  add(
    `${inFlight}: stdio all/base CPU per call`,
    ratio(g('sluice-all-stdio').cpuUsPerCall, g('base-all-stdio').cpuUsPerCall),
    '(info)',
    () => true,
  );
  add(
    `${inFlight}: stdio all/bare p50`,
    ratio(g('sluice-all-stdio').p50Us, g('bare-stdio').p50Us),
    '<= 1.15',
    (v) => v <= 1.15,
  );
}
printTable(
  'Ratios in this run, with the goals of issue 19',
  goals.map((x) => ({
    ratio: x.label,
    value: x.value,
    goal: x.goal,
    met: x.goal === '(info)' ? '' : x.met ? 'yes' : 'no',
  })),
);
writeResult(quick ? 'production-quick' : 'production', { settings, results, goals });
for (const session of sessions) session.close();
for (const t of [...targets, upstream]) t.child.kill();
process.exit(0);
