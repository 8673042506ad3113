import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { Redis } from 'ioredis';

/** A redis-server of the test's own, on a free loopback port. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** A fresh client for looking at (and poking) Redis directly; closed with the server. */
  client(): Redis;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty (nothing is persisted). */
  start(): Promise<void>;
  /** Disconnects the helper's clients and stops the server for good. */
  close(): Promise<void>;
}

function findRedisServer(): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin', '/usr/sbin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(
    'redis-server is not installed: the @sluice/store-redis tests start their own Redis. ' +
      'Install it (Debian: apt-get install redis-server; .ci/run does this) and run the tests again.',
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function launch(binary: string, port: number): Promise<ChildProcess> {
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server did not start on port ${port}:\n${output}`));
    }, 10_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.stdout.resume();
        child.stderr.resume();
        resolve(child);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with code ${code} before it was ready on port ${port}:\n${output}`));
    });
  });
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts redis-server on a free loopback port; fails (never skips) when it is not installed. */
export async function startRedis(): Promise<RedisServer> {
  const binary = findRedisServer();
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(binary, port);
    } catch (error) {
      // Another test may have taken the port between the probe and the launch.
      if (attempt >= 3) throw error;
    }
  }
  running.add(child);
  const clients: Redis[] = [];
  const url = `redis://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    const current = child;
    if (current === undefined) return;
    child = undefined;
    running.delete(current);
    if (current.exitCode === null && current.signalCode === null) {
      const exited = new Promise((resolve) => current.once('exit', resolve));
      current.kill('SIGTERM');
      await exited;
    }
  };
  return {
    port,
    url,
    client: () => {
      const client = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      clients.push(client);
      return client;
    },
    stop,
    close: async () => {
      for (const client of clients.splice(0)) client.disconnect();
      await stop();
    },
    start: async () => {
      if (child !== undefined) return;
      child = await launch(binary, port);
      running.add(child);
    },
  };
}
