// A replicated Sluice deployment for the fleet tests and the fleet benchmark: N `sluice serve`
// processes (the built CLI) sharing one redis-server, behind HAProxy, with a gate (an HTTP server in
// this process) that the upstream's tools report to. Everything runs on free loopback ports and
// stops with `fleet.close()`; a process exit kills what is left.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { Redis } from 'ioredis';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** The built CLI: the fleet runs what users run. `pnpm build` (part of `pnpm test`) makes it. */
export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const UPSTREAM = fileURLToPath(new URL('./fixtures/upstream.mjs', import.meta.url));
/** Preloaded into a replica whose clock is set off (`clockSkewMs`): shifts its Date by that much. */
const CLOCK_SKEW = fileURLToPath(new URL('./fixtures/clock-skew.mjs', import.meta.url));

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

// ---------------------------------------------------------------- binaries

function findBinary(name: string): string | undefined {
  const dirs = [
    ...(process.env.PATH ?? '').split(delimiter),
    '/usr/bin',
    '/usr/local/bin',
    '/usr/sbin',
    '/usr/local/sbin',
  ];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * What the fleet needs and is missing: redis-server, haproxy, the built CLI.
 * Empty when everything is there.
 */
export function fleetMissing(): string[] {
  const missing: string[] = [];
  for (const binary of ['redis-server', 'haproxy']) if (!findBinary(binary)) missing.push(binary);
  if (!existsSync(CLI)) missing.push(`${CLI} (run pnpm build)`);
  return missing;
}

// ---------------------------------------------------------------- ports

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` holds; fails with `what` after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for: ${what}`);
    await sleep(20);
  }
}

/** Keeps the last `limit` characters of a child's output. */
function tail(limit = 200_000): { add: (chunk: Buffer) => void; text: () => string } {
  let text = '';
  return {
    add: (chunk) => {
      text += chunk.toString();
      if (text.length > limit) text = text.slice(-limit);
    },
    text: () => text,
  };
}

// ---------------------------------------------------------------- redis

export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  /** A client for looking at Redis (closed with the server). */
  readonly client: Redis;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  close(): Promise<void>;
}

function launchRedis(port: number): Promise<ChildProcess> {
  const binary = findBinary('redis-server') ?? 'redis-server';
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start on port ${port}:\n${output}`));
    }, 10_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!output.includes('Ready to accept connections')) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stdout.resume();
      child.stderr.resume();
      resolve(child);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) before it was ready on port ${port}:\n${output}`));
    });
  });
}

export async function startRedis(): Promise<RedisProcess> {
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launchRedis(port);
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  const stop = async (): Promise<void> => {
    const current = child;
    child = undefined;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill('SIGTERM');
    await exited;
  };
  return {
    port,
    url,
    client,
    stop,
    start: async () => {
      if (child === undefined) child = await launchRedis(port);
    },
    close: async () => {
      client.disconnect();
      await stop();
    },
  };
}

// ---------------------------------------------------------------- the gate

export interface GateEntry {
  readonly tool: string;
  readonly tag: string;
  readonly replica: string;
  readonly at: number;
}

/**
 * Where the upstream's `work` and `refund` calls report while they run: it
 * counts the calls inside the tool (across every replica) and holds each
 * until the test releases it, unless the tool's gate is open.
 */
export class Gate {
  readonly arrivals: GateEntry[] = [];
  private readonly waiting: Array<{ entry: GateEntry; release: () => void }> = [];
  private readonly active = new Map<string, number>();
  private readonly peak = new Map<string, number>();
  private readonly opened = new Map<string, number>();
  private server: http.Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://gate');
      const entry: GateEntry = {
        tool: url.searchParams.get('tool') ?? '',
        tag: url.searchParams.get('tag') ?? '',
        replica: url.searchParams.get('replica') ?? '',
        at: Date.now(),
      };
      this.arrivals.push(entry);
      const count = (this.active.get(entry.tool) ?? 0) + 1;
      this.active.set(entry.tool, count);
      this.peak.set(entry.tool, Math.max(this.peak.get(entry.tool) ?? 0, count));
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        this.active.set(entry.tool, (this.active.get(entry.tool) ?? 1) - 1);
        const index = this.waiting.findIndex((w) => w.entry === entry);
        if (index >= 0) this.waiting.splice(index, 1);
      };
      // The replica (and its upstream) died: the call is no longer inside the tool.
      res.once('close', finish);
      const release = (): void => {
        finish();
        res.end('ok');
      };
      const delay = this.opened.get(entry.tool);
      if (delay === undefined) this.waiting.push({ entry, release });
      else if (delay === 0) release();
      else setTimeout(release, delay);
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /** Calls of `tool` inside the tool now. */
  inside(tool: string): number {
    return this.active.get(tool) ?? 0;
  }

  /** The most calls of `tool` ever inside the tool at once. */
  peakOf(tool: string): number {
    return this.peak.get(tool) ?? 0;
  }

  resetPeak(tool: string): void {
    this.peak.set(tool, this.inside(tool));
  }

  /** The held calls of `tool`, oldest first. */
  held(tool: string): GateEntry[] {
    return this.waiting.filter((w) => w.entry.tool === tool).map((w) => w.entry);
  }

  /** Lets the `count` oldest held calls of `tool` (all by default) return. */
  release(tool: string, count = Infinity): number {
    const chosen = this.waiting.filter((w) => w.entry.tool === tool).slice(0, count);
    for (const w of chosen) w.release();
    return chosen.length;
  }

  /** From now on calls of `tool` pass at once (or after `delayMs`); held ones are released. */
  open(tool: string, delayMs = 0): void {
    this.opened.set(tool, delayMs);
    this.release(tool);
  }

  /** From now on calls of `tool` are held again. */
  shut(tool: string): void {
    this.opened.delete(tool);
  }

  async close(): Promise<void> {
    for (const w of this.waiting.splice(0)) w.release();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

// ---------------------------------------------------------------- replicas

export interface ReplicaOptions {
  readonly redisUrl: string;
  readonly gateUrl: string;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly onRedisLoss: 'failClosed' | 'failOpen';
  readonly syncMs: number;
  /** Fixed port (to restart a replica where the load balancer expects it); 0 picks one. */
  readonly port?: number;
  /** Limits of up_work; maxQueue 20 by default. */
  readonly work: { maxActive: number; maxQueue: number };
  /** `memory` runs the replica without Redis (the benchmark's baseline). */
  readonly store?: 'redis' | 'memory';
  /** More limited tools (the benchmark guards up_whoami). */
  readonly guarded?: Record<string, GuardedTool>;
  /** Listen with these API keys (named `agent` and `ops`; `ops` may use the console); none by default. */
  readonly keys?: { readonly agent: string; readonly ops: string };
  /** The replicas' `drainDelayMs` (0 by default). */
  readonly drainDelayMs?: number;
  /** The replicas' `listen.http.maxSessions` (the default otherwise). */
  readonly maxSessions?: number;
  /** The replicas' `plugins.risk.approval.timeoutMs` (the default otherwise). */
  readonly approvalTimeoutMs?: number;
  /** How far each replica's clock (by name) is set off from the test's, in ms: positive runs ahead. */
  readonly clockSkewMs?: Readonly<Record<string, number>>;
}

/** A tool's concurrency limits in the replicas' config. */
export interface GuardedTool {
  readonly maxActive: number;
  readonly maxQueue: number;
  readonly rate?: { readonly calls: number; readonly perMs: number };
}

/** The replica's config file: the one the README's "Running many replicas" section describes. */
export function replicaConfig(name: string, options: ReplicaOptions): Record<string, unknown> {
  return {
    name: 'fleet',
    listen: {
      http: {
        host: '127.0.0.1',
        port: options.port ?? 0,
        ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
        ...(options.keys
          ? {
              auth: {
                type: 'apiKeys',
                keys: [
                  { name: 'agent', key: options.keys.agent, scopes: ['mcp'] },
                  { name: 'ops', key: options.keys.ops, scopes: ['mcp', 'admin'] },
                ],
              },
            }
          : {}),
      },
    },
    ...(options.keys ? { admin: { scopes: ['admin'] } } : {}),
    upstreams: [
      {
        name: 'up',
        namespace: 'up',
        connection: {
          type: 'stdio',
          command: process.execPath,
          args: [UPSTREAM],
          env: { REPLICA: name, GATE: options.gateUrl },
        },
      },
    ],
    plugins: {
      concurrency: {
        tools: { up_work: options.work, ...options.guarded },
        mutex: { destructive: ['up_refund'], keyArgs: ['invoiceId'] },
      },
      risk: {
        ledger: { syncMs: options.syncMs },
        approval: {
          secret: 'the approval key every replica of the fleet shares',
          ...(options.approvalTimeoutMs ? { timeoutMs: options.approvalTimeoutMs } : {}),
        },
        tools: [{ match: 'up_deploy', hitl: true }],
        calls: { events: 'off' },
      },
    },
    store:
      options.store === 'memory'
        ? 'memory'
        : {
            redis: options.redisUrl,
            keyPrefix: options.keyPrefix,
            leaseMs: options.leaseMs,
            onRedisLoss: options.onRedisLoss,
            connectTimeoutMs: 2_000,
          },
    logLevel: 'info',
    drainTimeoutMs: 2_000,
    ...(options.drainDelayMs ? { drainDelayMs: options.drainDelayMs } : {}),
  };
}

export interface Replica {
  readonly name: string;
  readonly port: number;
  readonly url: URL;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  stderr(): string;
  /** SIGKILL: no drain, no release of its leases. */
  kill(): Promise<void>;
  /** SIGTERM (drain), SIGKILL after 5 s. */
  stop(): Promise<void>;
}

export async function startReplica(name: string, options: ReplicaOptions, dir: string): Promise<Replica> {
  const file = join(dir, `replica-${name}.json`);
  writeFileSync(file, JSON.stringify(replicaConfig(name, options), null, 2));
  const skewMs = options.clockSkewMs?.[name] ?? 0;
  const child = spawn(process.execPath, [...(skewMs ? ['--import', CLOCK_SKEW] : []), CLI, 'serve', '--config', file], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: 'production', ...(skewMs ? { SLUICE_TEST_CLOCK_SKEW_MS: String(skewMs) } : {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  live.add(child);
  const log = tail();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => live.delete(child));
  const url = await new Promise<URL>((resolve, reject) => {
    let lines = '';
    let ready = false;
    const timer = setTimeout(() => reject(new Error(`replica ${name} did not start:\n${log.text()}`)), 60_000);
    child.stderr.on('data', (chunk: Buffer) => {
      log.add(chunk);
      if (ready) return;
      lines += chunk.toString();
      const match = /"event":"gateway\.ready"[^\n]*?"url":"([^"]+)"/.exec(lines);
      if (!match?.[1]) return;
      clearTimeout(timer);
      ready = true;
      lines = '';
      resolve(new URL(match[1]));
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`replica ${name} exited before it was ready:\n${log.text()}`));
    });
  });
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return {
    name,
    port: Number(url.port),
    url,
    child,
    exited,
    stderr: log.text,
    kill,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000 + (options.drainDelayMs ?? 0));
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------- haproxy

/**
 * The HAProxy config in front of the replicas: round-robin on every request,
 * with no stick rules at all. 2026-07-28 is stateless; 2025-11-25 sessions
 * and console logins live in Redis, so any replica serves any request.
 */
export function haproxyConfig(
  port: number,
  replicas: ReadonlyArray<{ name: string; port: number }>,
  sticky = false,
): string {
  return [
    'global',
    '  maxconn 4096',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 120s',
    '  timeout server 120s',
    '  timeout http-keep-alive 60s',
    '  timeout check 5s',
    '  option redispatch',
    // Node closes idle keep-alive connections after 5 s; a request HAProxy sent on one just as it
    // closed would be lost. One connection per request to the replicas (loopback) avoids the race.
    '  option http-server-close',
    '  retries 2',
    '',
    'frontend mcp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend sluice',
    '',
    'backend sluice',
    '  balance roundrobin',
    // The former config, for the benchmark's comparison only: each session pinned to the replica that opened it.
    ...(sticky
      ? [
          '  stick-table type string len 64 size 1m expire 30m',
          '  stick match req.hdr(mcp-session-id)',
          '  stick store-response res.hdr(mcp-session-id)',
        ]
      : []),
    // The listener answers 403 to a request whose Host it does not serve (DNS rebinding); HAProxy's
    // default check is HTTP/1.0 without one.
    '  option httpchk',
    // /readyz as deploy/haproxy.cfg: public (the replicas may require keys), and 503 while a replica drains.
    '  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1',
    '  http-check expect status 200',
    '  http-response set-header x-sluice-replica %[srv_name]',
    ...replicas.map((r) => `  server ${r.name} 127.0.0.1:${r.port} check inter 1s fall 3 rise 2`),
    '',
  ].join('\n');
}

export interface LoadBalancer {
  readonly url: URL;
  readonly config: string;
  stop(): Promise<void>;
}

export async function startHaproxy(
  replicas: ReadonlyArray<{ name: string; port: number }>,
  dir: string,
  sticky = false,
): Promise<LoadBalancer> {
  const { port, config, stop } = await startBalancer(
    (port) => haproxyConfig(port, replicas, sticky),
    join(dir, 'haproxy.cfg'),
  );
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), config, stop };
}

/**
 * HAProxy on a free port, with the config `configFor(port)` gives written to
 * `file`: started again on another port when that one is not its alone.
 * HAProxy binds with SO_REUSEPORT by default (for seamless reloads), so a
 * second HAProxy given the same free port (another test file's) would bind
 * beside the first, and the kernel would share the connections out between
 * the two. The config it runs says `noreuseport`, and it is ready once its
 * port answers, at `/balancer-check`, a word only this start knows.
 */
export async function startBalancer(
  configFor: (port: number) => string,
  file: string,
): Promise<{ port: number; config: string; stop: () => Promise<void> }> {
  const binary = findBinary('haproxy') ?? 'haproxy';
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const word = randomUUID();
    const config = ownPort(configFor(port), port, word);
    writeFileSync(file, config);
    const check = spawnSync(binary, ['-c', '-q', '-f', file], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy rejected its config:\n${check.stderr}\n${config}`);
    const child = spawn(binary, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    const log = tail(20_000);
    child.stdout.on('data', log.add);
    child.stderr.on('data', log.add);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    void exited.then(() => live.delete(child));
    const state = { dead: false };
    void exited.then(() => (state.dead = true));
    const deadline = Date.now() + 10_000;
    while (!state.dead && !(await answers(port, word)) && Date.now() < deadline) await sleep(20);
    if (state.dead || Date.now() >= deadline) {
      child.kill('SIGKILL');
      if (attempt >= 3) throw new Error(`haproxy did not start:\n${log.text()}`);
      continue;
    }
    return {
      port,
      config,
      stop: async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        await exited;
      },
    };
  }
}

/** `config` bound to `port` alone (`noreuseport`), its frontend answering `word` at `/balancer-check`. */
function ownPort(config: string, port: number, word: string): string {
  const bind = `  bind 127.0.0.1:${port}\n`;
  if (!config.startsWith('global\n') && !config.includes('\nglobal\n')) throw new Error('no global section');
  if (!config.includes(bind)) throw new Error(`no ${bind.trim()} in the config`);
  return config
    .replace(/^global\n/m, 'global\n  noreuseport\n')
    .replace(
      bind,
      `${bind}  http-request return status 200 content-type text/plain string ${word} if { path /balancer-check }\n`,
    );
}

/** Whether `port` answers `word` at `/balancer-check`: the balancer started there is the one that knows it. */
async function answers(port: number, word: string): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/balancer-check`);
    return (await response.text()) === word;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- the fleet

export interface FleetOptions {
  readonly replicas?: number;
  readonly leaseMs?: number;
  readonly onRedisLoss?: 'failClosed' | 'failOpen';
  readonly syncMs?: number;
  readonly work?: { maxActive: number; maxQueue: number };
  readonly store?: 'redis' | 'memory';
  readonly guarded?: Record<string, GuardedTool>;
  readonly keys?: { readonly agent: string; readonly ops: string };
  readonly drainDelayMs?: number;
  readonly maxSessions?: number;
  readonly approvalTimeoutMs?: number;
  /** How far each replica's clock (by name) is set off, in ms: positive runs ahead. */
  readonly clockSkewMs?: Readonly<Record<string, number>>;
  /** Pin 2025-11-25 sessions to a replica with a stick table, as the fleet did before (benchmark baseline). */
  readonly sticky?: boolean;
}

export interface Fleet {
  readonly redis: RedisProcess;
  readonly gate: Gate;
  readonly replicas: Replica[];
  readonly lb: LoadBalancer;
  readonly keyPrefix: string;
  readonly options: ReplicaOptions;
  /** The replica by name (a, b, c...). */
  replica(name: string): Replica;
  /** Stops a replica (SIGKILL, or SIGTERM and its drain) and starts it again on the same port. */
  restart(name: string, how: 'kill' | 'stop'): Promise<Replica>;
  close(): Promise<void>;
}

let fleets = 0;

export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-fleet-'));
  const redis = await startRedis();
  const gate = new Gate();
  await gate.start();
  const keyPrefix = `fleet${process.pid}-${++fleets}:`;
  const replicaOptions: ReplicaOptions = {
    redisUrl: redis.url,
    gateUrl: gate.url,
    keyPrefix,
    leaseMs: options.leaseMs ?? 10_000,
    onRedisLoss: options.onRedisLoss ?? 'failClosed',
    syncMs: options.syncMs ?? 500,
    work: options.work ?? { maxActive: 5, maxQueue: 20 },
    ...(options.store ? { store: options.store } : {}),
    ...(options.guarded ? { guarded: options.guarded } : {}),
    ...(options.keys ? { keys: options.keys } : {}),
    ...(options.drainDelayMs ? { drainDelayMs: options.drainDelayMs } : {}),
    ...(options.maxSessions ? { maxSessions: options.maxSessions } : {}),
    ...(options.approvalTimeoutMs ? { approvalTimeoutMs: options.approvalTimeoutMs } : {}),
    ...(options.clockSkewMs ? { clockSkewMs: options.clockSkewMs } : {}),
  };
  const names = 'abcdefgh'.slice(0, options.replicas ?? 3).split('');
  const replicas: Replica[] = [];
  let lb: LoadBalancer | undefined;
  const close = async (): Promise<void> => {
    await gate.close();
    await lb?.stop();
    await Promise.allSettled(replicas.map((r) => r.stop()));
    await redis.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The first replica's import writes the ledger; the others then start together and read it.
    replicas.push(await startReplica(names[0]!, replicaOptions, dir));
    const rest = await Promise.allSettled(names.slice(1).map((name) => startReplica(name, replicaOptions, dir)));
    for (const started of rest) if (started.status === 'fulfilled') replicas.push(started.value);
    const failed = rest.find((started) => started.status === 'rejected');
    if (failed) throw failed.reason;
    lb = await startHaproxy(replicas, dir, options.sticky);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    redis,
    gate,
    replicas,
    lb,
    keyPrefix,
    options: replicaOptions,
    replica: (name) => {
      const found = replicas.find((r) => r.name === name);
      if (!found) throw new Error(`no replica ${name}`);
      return found;
    },
    restart: async (name, how) => {
      const index = replicas.findIndex((r) => r.name === name);
      const old = replicas[index];
      if (!old) throw new Error(`no replica ${name}`);
      await (how === 'kill' ? old.kill() : old.stop());
      const started = await startReplica(name, { ...replicaOptions, port: old.port }, dir);
      replicas[index] = started;
      return started;
    },
    close,
  };
}

// ---------------------------------------------------------------- clients

export type Era = '2026-07-28' | '2025-11-25';

export interface FleetClient {
  readonly client: Client;
  /** The replica that answered each HTTP request, as HAProxy named it (x-sluice-replica). */
  readonly servedBy: string[];
  /** Each HTTP request as sent: its method, body and the replica that answered it (null until it answers). */
  readonly requests: Array<{ readonly method: string; readonly body: string; replica: string | null }>;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** A real SDK client speaking `era` to `url`, recording which replica answered each request. */
export async function fleetClient(
  url: URL,
  era: Era,
  options: { manualInput?: boolean; key?: string } = {},
): Promise<FleetClient> {
  const servedBy: string[] = [];
  const requests: FleetClient['requests'] = [];
  const client = new Client(
    { name: 'fleet-test', version: '1.0.0' },
    {
      versionNegotiation: { mode: era === '2026-07-28' ? { pin: '2026-07-28' } : 'legacy' },
      capabilities: { elicitation: { form: {} } },
      ...(options.manualInput ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    if (options.key !== undefined) headers.set('authorization', `Bearer ${options.key}`);
    const sent: FleetClient['requests'][number] = {
      method: init?.method ?? 'GET',
      body: typeof init?.body === 'string' ? init.body : '',
      replica: null,
    };
    requests.push(sent);
    const response = await fetch(input, { ...init, headers });
    const replica = response.headers.get('x-sluice-replica');
    if (replica) servedBy.push(replica);
    sent.replica = replica;
    return response;
  };
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: recordingFetch }));
  return {
    client,
    servedBy,
    requests,
    call: async (name, args = {}) => await client.callTool({ name, arguments: args }, { timeout: 120_000 }),
    close: () => client.close().catch(() => {}),
  };
}

/**
 * Calls `up_whoami` until each of the three replicas has answered (so each holds a copy of the client's
 * session), at most 12 times: round-robin turns go to every request, a GET stream's too, so N calls need
 * not reach N replicas. The replicas that answered.
 */
export async function servedEverywhere(client: FleetClient): Promise<Set<string>> {
  const served = new Set<string>();
  for (let i = 0; i < 12 && served.size < 3; i++) served.add(textOf(await client.call('up_whoami')));
  return served;
}

/** The text of a result's first block. */
export function textOf(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

/** The Sluice error code of a refusal result (`_meta["dev.sluice/error"].code`), if any. */
export function refusalCode(result: CallToolResult): string | undefined {
  const error = (result._meta as Record<string, { code?: string } | undefined> | undefined)?.['dev.sluice/error'];
  return result.isError ? error?.code : undefined;
}

/** The Redis key of one semaphore's part, as @sluice/store-redis names it. */
export function semaphoreKey(prefix: string, key: string, part: 'leases' | 'queue'): string {
  return `${prefix}sem:{${key}}:${part}`;
}

/**
 * Whether the fleet tests can run here. A dev machine without redis-server
 * or haproxy skips them with a loud message; in CI (`CI` or
 * `SLUICE_REQUIRE_FLEET` set, as `.ci/run` does) a missing binary fails.
 */
export function fleetAvailable(): boolean {
  const missing = fleetMissing();
  if (missing.length === 0) return true;
  const message = `the fleet tests need ${missing.join(', ')}`;
  if (process.env.CI || process.env.SLUICE_REQUIRE_FLEET)
    throw new Error(`${message}, and they are required here (CI): install them (.ci/run does)`);
  process.stderr.write(
    `\n${'!'.repeat(78)}\n!!! SKIPPING THE FLEET TESTS: ${message}.\n` +
      '!!! Install them (Debian: apt-get install redis-server haproxy; pnpm build) to run them.\n' +
      `!!! In CI (CI or SLUICE_REQUIRE_FLEET set) this is a failure, not a skip.\n${'!'.repeat(78)}\n\n`,
  );
  return false;
}
