// Child processes for the robustness tests: the server under test on HTTP or
// stdio, started from its sources, with its stderr kept for failure messages.
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = fileURLToPath(new URL('./fixtures/serve-under-test.ts', import.meta.url));

export interface ServerChild {
  readonly child: ChildProcessWithoutNullStreams;
  /** Whether the process is still running. */
  alive(): boolean;
  stderr(): string;
  stop(): Promise<void>;
}

export function spawnServer(mode: 'http' | 'stdio', nodeFlags: readonly string[] = []): ServerChild {
  const child = spawn(process.execPath, [...nodeFlags, '--conditions=sluice:source', '--import', 'tsx', ENTRY, mode], {
    cwd: ROOT,
    env: { ...process.env, SLUICE_LOG_LEVEL: 'error' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    alive: () => child.exitCode === null && child.signalCode === null,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Starts the HTTP server under test and reads its URL from the first stdout line. */
export async function spawnHttpServer(nodeFlags: readonly string[] = []): Promise<ServerChild & { url: URL }> {
  const server = spawnServer('http', nodeFlags);
  const url = await new Promise<URL>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no URL from the server under test:\n${server.stderr()}`)), 30_000);
    server.child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        resolve(new URL(line.trim()));
      }
    });
    server.child.once('exit', () => reject(new Error(`the server under test exited:\n${server.stderr()}`)));
  });
  return Object.assign(server, { url });
}

const HOSTILE_ENTRY = fileURLToPath(new URL('./fixtures/serve-hostile.ts', import.meta.url));
const HOSTILE_UPSTREAM = fileURLToPath(new URL('./fixtures/hostile-upstream.mjs', import.meta.url));

/** Reads the first stdout line of a child: the URL it serves. */
function firstLine(child: ChildProcessWithoutNullStreams, stderr: () => string): Promise<URL> {
  return new Promise<URL>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no URL from the child:\n${stderr()}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(new URL(out.split('\n')[0]!.trim()));
      }
    });
    child.once('exit', () => reject(new Error(`the child exited:\n${stderr()}`)));
  });
}

function started(child: ChildProcessWithoutNullStreams): ServerChild {
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    alive: () => child.exitCode === null && child.signalCode === null,
    stderr: () => err,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The scripted hostile upstream over Streamable HTTP; `env` scripts it (HOSTILE_SCHEMAS, ...). */
export async function spawnHostileUpstream(env: Record<string, string> = {}): Promise<ServerChild & { url: URL }> {
  const child = spawn(process.execPath, [HOSTILE_UPSTREAM, 'http'], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const upstream = started(child);
  return Object.assign(upstream, { url: await firstLine(child, upstream.stderr) });
}

/**
 * The server under test importing the hostile upstream over stdio (`hs_*`)
 * and over HTTP at `httpUpstream` (`hh_*`), listening on HTTP.
 */
export async function spawnHostileServer(
  httpUpstream: URL,
  env: Record<string, string> = {},
  nodeFlags: readonly string[] = [],
): Promise<ServerChild & { url: URL }> {
  const child = spawn(
    process.execPath,
    [...nodeFlags, '--conditions=sluice:source', '--import', 'tsx', HOSTILE_ENTRY],
    {
      cwd: ROOT,
      env: { ...process.env, SLUICE_LOG_LEVEL: 'error', HOSTILE_HTTP_URL: httpUpstream.href, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const server = started(child);
  return Object.assign(server, { url: await firstLine(child, server.stderr) });
}
