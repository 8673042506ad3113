// Sluice against the peer proxies, measured from outside: every target a process of its own over the same
// upstream (an SDK echo server over Streamable HTTP, or the stdio fixture as each proxy's child), one lean
// keep-alive client (production/load.ts) at 1, 16 and 64 calls in flight, targets alternating round by
// round, CPU per call read from each target's /proc/<pid>/stat (the proxy's own process, not its upstream).
//
// HTTP upstream: floor (node:http, fixed answer), relay (node:http byte relay), bare (SDK client + SDK
//   server), sluice-none / sluice-all (createGateway, what `sluice serve` runs), civic-passthrough, mcp-hub.
// stdio upstream: bare-stdio, sluice-none-stdio, sluice-all-stdio, mcp-proxy, supergateway, mcp-hub-stdio.
// mcp-proxy and supergateway front stdio servers only; @civic/passthrough-mcp-server HTTP ones only;
// mcp-hub 4.2 serves the legacy HTTP+SSE transport (GET /mcp, POST /messages), which the load client speaks too.
//
// Run: pnpm bench:peers   (BENCH_QUICK=1 for a short run; BENCH_ROUNDS, BENCH_PER_ROUND override;
// BENCH_ONLY=name,name measures those targets only; SLUICE_PEERS_DIR moves the install folder)
import { fork, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTable, ratio, writeResult } from '../lib.js';
import { openSession, openSseSession } from '../production/load.js';
import type { Session } from '../production/load.js';
import { measure, settingsFromEnv } from '../production/measure.js';
import { PEERS, installPeers, installedVersion } from './install.js';
import type { Peer } from './install.js';

const TARGET = fileURLToPath(new URL('../production/target.ts', import.meta.url));
const STDIO_FIXTURE = fileURLToPath(new URL('../../packages/core/test/fixtures/stdio-upstream.mjs', import.meta.url));
const settings = settingsFromEnv({ warmup: 1_000, rounds: 6, perRound: 1_000, concurrency: [1, 16, 64] });
const quick = settings.quick;
const only = new Set((process.env.BENCH_ONLY ?? '').split(',').filter(Boolean));
const READY_MS = 60_000;
/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

interface Target {
  readonly name: string;
  /** 'http' or 'stdio': which bare proxy its ratios compare with. */
  readonly upstream: 'http' | 'stdio';
  readonly child: ChildProcess;
  readonly url: URL;
  /** Opens the load client's session: Streamable HTTP, or the legacy HTTP+SSE transport for mcp-hub. */
  readonly open: (url: URL, maxSockets: number) => Promise<Session>;
  /** A peer's session from its readiness check, kept: mcp-hub 4.2 fails when a client goes away. */
  readonly session?: Session;
  cpu(): Promise<number>;
}

/** CPU time (user + system) of one process so far, in µs, from /proc: the same reading for every target. */
function procCpu(pid: number): Promise<number> {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Promise.resolve((ticks * 1e6) / TICKS_PER_SECOND);
}

/** Forwards a target's stderr, each distinct line once, labelled. */
function labelStderr(name: string, child: ChildProcess): void {
  const seen = new Set<string>();
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    for (const line of text.split('\n')) {
      const key = line.replace(/\d+/g, 'N').trim();
      if (key === '' || seen.has(key) || seen.size > 20) continue;
      seen.add(key);
      process.stderr.write(`[${name}] ${line.slice(0, 300)}\n`);
    }
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** One of our targets (production/target.ts): it says its URL over IPC. */
async function ours(name: string, upstream: Target['upstream'], args: string[]): Promise<Target> {
  const child = fork(TARGET, args, {
    execArgv: ['--conditions=sluice:source', '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  labelStderr(name, child);
  const url = await new Promise<URL>((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve(new URL(m.url)));
    child.once('exit', (code) => reject(new Error(`target ${name} exited with ${code} before listening`)));
  });
  return { name, upstream, child, url, open: openSession, cpu: () => procCpu(child.pid!) };
}

/** A peer's entry script, resolved from its package.json `bin` (run with this node, not through a shim). */
function peerBin(folder: string, peer: Peer, bin?: string): string {
  const dir = join(folder, 'node_modules', peer);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    bin?: string | Record<string, string>;
  };
  const entry = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[bin ?? Object.keys(manifest.bin)[0]!];
  if (entry === undefined) throw new Error(`${peer} has no bin`);
  return realpathSync(join(dir, entry));
}

/** A peer proxy started on a free port; ready once the load client can open a session on it. */
async function peer(
  name: string,
  upstream: Target['upstream'],
  start: (port: number) => { args: string[]; env?: Record<string, string> },
  path = '/mcp',
  open: Target['open'] = openSession,
): Promise<Target> {
  const port = await freePort();
  const { args, env } = start(port);
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  labelStderr(name, child);
  const url = new URL(`http://127.0.0.1:${port}${path}`);
  const deadline = Date.now() + READY_MS;
  let session: Session;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before listening`);
    try {
      session = await open(url, Math.max(...settings.concurrency));
      break;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(
          `${name} was not ready after ${READY_MS} ms: ${String(error).replace(/\s+/g, ' ').slice(0, 200)}`,
          {
            cause: error,
          },
        );
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  return { name, upstream, child, url, open, session, cpu: () => procCpu(child.pid!) };
}

const folder = installPeers();
const versions = Object.fromEntries(Object.keys(PEERS).map((p) => [p, installedVersion(folder, p as Peer)]));
const fixtureCommand = `${JSON.stringify(process.execPath)} ${JSON.stringify(STDIO_FIXTURE)}`;
// mcp-hub reads its marketplace catalog from a cache under its home, and fetches it from the web when that
// is missing or stale: a fresh one-entry cache keeps the benchmark on loopback.
const hubHome = join(folder, 'hub-home');
mkdirSync(join(hubHome, '.mcp-hub', 'cache'), { recursive: true });
writeFileSync(
  join(hubHome, '.mcp-hub', 'cache', 'registry.json'),
  JSON.stringify({
    registry: { servers: [{ id: 'none', name: 'none' }] },
    lastFetchedAt: Date.now(),
    serverDocumentation: {},
  }),
);
const hubConfig = (name: string, server: unknown) => {
  const file = join(folder, `${name}.json`);
  writeFileSync(file, JSON.stringify({ mcpServers: { up: server } }));
  return file;
};

const upstreamServer = await ours('upstream', 'http', ['upstream']);
const up = upstreamServer.url.href;
const specs: [string, () => Promise<Target>][] = [
  ['floor', () => ours('floor', 'http', ['floor'])],
  ['relay', () => ours('relay', 'http', ['relay', up])],
  ['bare', () => ours('bare', 'http', ['bare', up])],
  ['sluice-none', () => ours('sluice-none', 'http', ['sluice-none', up])],
  ['sluice-all', () => ours('sluice-all', 'http', ['sluice-all', up])],
  [
    'civic-passthrough',
    () =>
      peer('civic-passthrough', 'http', (port) => ({
        args: [peerBin(folder, '@civic/passthrough-mcp-server')],
        env: { PORT: String(port), TARGET_SERVER_URL: up, TARGET_SERVER_TRANSPORT: 'httpStream' },
      })),
  ],
  [
    'mcp-hub',
    () =>
      peer(
        'mcp-hub',
        'http',
        (port) => ({
          args: [peerBin(folder, 'mcp-hub'), '--port', String(port), '--config', hubConfig('hub-http', { url: up })],
          env: { HOME: hubHome },
        }),
        '/mcp',
        openSseSession,
      ),
  ],
  ['bare-stdio', () => ours('bare-stdio', 'stdio', ['bare', 'stdio'])],
  ['sluice-none-stdio', () => ours('sluice-none-stdio', 'stdio', ['sluice-none', 'stdio'])],
  ['sluice-all-stdio', () => ours('sluice-all-stdio', 'stdio', ['sluice-all', 'stdio'])],
  [
    'mcp-proxy',
    () =>
      peer('mcp-proxy', 'stdio', (port) => ({
        args: [
          peerBin(folder, 'mcp-proxy'),
          '--port',
          String(port),
          '--server',
          'stream',
          '--',
          process.execPath,
          STDIO_FIXTURE,
        ],
      })),
  ],
  [
    'supergateway',
    () =>
      peer('supergateway', 'stdio', (port) => ({
        args: [
          peerBin(folder, 'supergateway'),
          '--stdio',
          fixtureCommand,
          '--outputTransport',
          'streamableHttp',
          '--stateful',
          '--port',
          String(port),
          '--logLevel',
          'none',
        ],
      })),
  ],
  [
    'mcp-hub-stdio',
    () =>
      peer(
        'mcp-hub-stdio',
        'stdio',
        (port) => ({
          args: [
            peerBin(folder, 'mcp-hub'),
            '--port',
            String(port),
            '--config',
            hubConfig('hub-stdio', { command: process.execPath, args: [STDIO_FIXTURE] }),
          ],
          env: { HOME: hubHome },
        }),
        '/mcp',
        openSseSession,
      ),
  ],
];
// The references every ratio needs are always measured.
const references = new Set(['floor', 'relay', 'bare', 'bare-stdio']);
const targets: Target[] = [];
const skipped: string[] = [];
for (const [name, start] of specs) {
  if (only.size > 0 && !only.has(name) && !references.has(name)) continue;
  try {
    process.stderr.write(`peers: starting ${name}\n`);
    targets.push(await start());
  } catch (error) {
    // A peer that cannot start here is reported, not silently dropped; ours must start.
    if (references.has(name) || name.startsWith('sluice')) throw error;
    skipped.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
const maxInFlight = Math.max(...settings.concurrency);
const PROBE_MS = 20_000;
/** A few calls, one then 16 at once, each answered in time: a target that cannot is reported, not measured. */
async function probe(session: Session): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_MS} ms`)), PROBE_MS);
  });
  try {
    await Promise.race([session.call(), late]);
    await Promise.race([Promise.all(Array.from({ length: 16 }, () => session.call())), late]);
  } finally {
    clearTimeout(timer);
  }
}
const sessions: Session[] = [];
for (const t of [...targets]) {
  try {
    const session = t.session ?? (await t.open(t.url, maxInFlight));
    try {
      await probe(session);
    } catch (error) {
      session.close();
      throw error;
    }
    sessions.push(session);
  } catch (error) {
    if (references.has(t.name) || t.name.startsWith('sluice')) throw error;
    skipped.push(`${t.name}: ${error instanceof Error ? error.message : String(error)}`);
    targets.splice(targets.indexOf(t), 1);
    t.child.kill('SIGKILL');
  }
}
const loadBefore = os.loadavg();
const { results, rows } = await measure(targets, sessions, settings, (text) =>
  process.stderr.write(`peers: measuring, ${text}\n`),
);
const loadAfter = os.loadavg();

const ratioRows: Record<string, string | number>[] = [];
for (const inFlight of settings.concurrency) {
  const at = results[String(inFlight)]!;
  for (const t of targets) {
    const bare = at[t.upstream === 'http' ? 'bare' : 'bare-stdio']!;
    const own = at[t.name]!;
    ratioRows.push({
      'in flight': inFlight,
      target: t.name,
      upstream: t.upstream,
      'p50/bare': ratio(own.p50Us, bare.p50Us),
      'p50/relay': ratio(own.p50Us, at['relay']!.p50Us),
      'p50/floor': ratio(own.p50Us, at['floor']!.p50Us),
      'calls/s / bare': ratio(own.callsPerSec, bare.callsPerSec),
      'CPU/call / relay': ratio(own.cpuUsPerCall, at['relay']!.cpuUsPerCall),
    });
  }
}
const machine = {
  cpu: os.cpus()[0]?.model ?? '?',
  cores: os.cpus().length,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  kernel: os.release(),
  node: process.version,
  loadBefore: loadBefore.map((l) => Math.round(l * 100) / 100),
  loadAfter: loadAfter.map((l) => Math.round(l * 100) / 100),
};
process.stdout.write(`\nmachine: ${JSON.stringify(machine)}\npeers: ${JSON.stringify(versions)}\n`);
process.stdout.write(`settings: ${JSON.stringify(settings)}\n`);
if (skipped.length > 0) process.stdout.write(`not measured: ${skipped.join('; ')}\n`);
printTable('tools/call, each target in its own process (µs, calls/s, µs CPU per call of the target process)', rows);
printTable('Ratios in this run (bare: the bare SDK proxy over the same upstream)', ratioRows);
writeResult(quick ? 'peers-quick' : 'peers', { settings, machine, versions, skipped, results, ratios: ratioRows });
for (const session of sessions) session.close();
// SIGKILL: mcp-hub 4.2 does not exit on SIGTERM.
for (const t of [...targets, upstreamServer]) t.child.kill('SIGKILL');
process.exit(0);
