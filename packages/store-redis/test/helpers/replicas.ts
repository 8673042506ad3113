import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = resolve(here, '../fixtures/replica.ts');
/** The workspace root: children run from there so that '@sluice/core' resolves to its sources. */
const ROOT = resolve(here, '../../../..');

export interface ReplicaOptions {
  readonly name: string;
  readonly redisUrl: string;
  readonly prefix: string;
  readonly leaseMs?: number;
  readonly onRedisLoss?: 'failClosed' | 'failOpen';
  /** Load @sluice/plugin-concurrency and its guarded tools. */
  readonly withPlugin?: boolean;
}

/** A Sluice replica in a child process, and an MCP client connected to it over HTTP. */
export interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  /** Calls a tool; the result's text is parsed as JSON when the call was not refused. */
  call(tool: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** Everything the replica logged so far. */
  stderr(): string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** Stops it politely (SIGTERM), or kills it if it will not go. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A started child: its URL once it printed `READY <url>`, its exit, and what it logged. */
export interface ReadyChild {
  readonly child: ChildProcess;
  readonly url: URL;
  readonly exited: Promise<void>;
  readonly stderr: () => string;
}

/**
 * Starts a fixture in a child process from the workspace root (so that
 * '@sluice/core' resolves to its sources) and waits for its `READY <url>`
 * line; fails with what it logged if it exits or takes a minute.
 */
export async function spawnUntilReady(fixture: string, name: string, env: Record<string, string>): Promise<ReadyChild> {
  const child = spawn(process.execPath, ['--conditions=sluice:source', '--import', 'tsx', fixture], {
    cwd: ROOT,
    env: { ...process.env, SLUICE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  void exited.then(() => live.delete(child));
  const url = await new Promise<URL>((ready, fail) => {
    let stdout = '';
    const timer = setTimeout(() => fail(new Error(`${name} did not start:\n${stderr}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /READY (\S+)/.exec(stdout);
      if (!match?.[1]) return;
      clearTimeout(timer);
      ready(new URL(match[1]));
    });
    void exited.then(() => {
      clearTimeout(timer);
      fail(new Error(`${name} exited before it was ready:\n${stderr}`));
    });
  });
  return { child, url, exited, stderr: () => stderr };
}

export async function startReplica(options: ReplicaOptions): Promise<Replica> {
  const { child, url, exited, stderr } = await spawnUntilReady(FIXTURE, `replica ${options.name}`, {
    REDIS_URL: options.redisUrl,
    KEY_PREFIX: options.prefix,
    REPLICA: options.name,
    LEASE_MS: String(options.leaseMs ?? 10_000),
    ON_REDIS_LOSS: options.onRedisLoss ?? 'failClosed',
    WITH_PLUGIN: options.withPlugin ? '1' : '0',
  });
  const client = new Client({ name: `test-${options.name}`, version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  return {
    name: options.name,
    child,
    call: async (tool, args) => await client.callTool({ name: tool, arguments: args }, { timeout: 120_000 }),
    stderr,
    exited,
    stop: async () => {
      await client.close().catch(() => {});
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The JSON a fixture tool answered with; the caller states its shape. */
export function answerOf(result: CallToolResult): unknown {
  const block = result.content[0];
  if (result.isError || block?.type !== 'text') throw new Error(`expected an answer, got ${JSON.stringify(result)}`);
  return JSON.parse(block.text);
}
