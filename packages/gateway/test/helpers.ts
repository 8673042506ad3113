// Shared by the gateway tests: the fixture upstream, clients, child processes of the CLI.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import type { CapturedLogger } from '@sluice/testing';
import type { Gateway, GatewayConfigInput, UpstreamConfigInput } from '@sluice/gateway';
import { createGateway, main } from '@sluice/gateway';

/** The fixture upstream (stdio): echo, meta, sleep, hold/release, handoff. */
export const FIXTURE_UPSTREAM = fileURLToPath(new URL('./fixtures/upstream.mjs', import.meta.url));
/** A stdio upstream whose `rug_pull` tool redefines its `lookup` tool at run time. */
export const RUG_PULL_UPSTREAM = fileURLToPath(new URL('./fixtures/rug-pull.mjs', import.meta.url));
/** The repository root: the CLI runs from here, on its sources. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The CLI's source, run with `--conditions=sluice:source --import tsx`. */
export const CLI_SOURCE = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const FROM_SOURCE = ['--conditions=sluice:source', '--import', 'tsx', CLI_SOURCE];
/**
 * How `runCli` starts the command: from its sources through tsx, or, with SLUICE_TEST_CLI=dist, from the build of
 * the same sources (run `pnpm build` first; CI does), which starts on about a third of the CPU time.
 */
const CLI_ARGS =
  process.env.SLUICE_TEST_CLI === 'dist' ? [fileURLToPath(new URL('../dist/cli.js', import.meta.url))] : FROM_SOURCE;

/** A stdio upstream entry for a config, running the fixture. */
export function fixtureUpstream(name: string, extra: Partial<UpstreamConfigInput> = {}): UpstreamConfigInput {
  return {
    name,
    namespace: name,
    connection: { type: 'stdio', command: process.execPath, args: [FIXTURE_UPSTREAM] },
    ...extra,
  };
}

/** The rug-pulling upstream as `shop` (its tools are `shop_lookup` and `shop_rug_pull`); `env` reaches its process. */
export function rugPullUpstream(env?: Record<string, string>): UpstreamConfigInput {
  return {
    name: 'shop',
    namespace: 'shop',
    connection: { type: 'stdio', command: process.execPath, args: [RUG_PULL_UPSTREAM], ...(env ? { env } : {}) },
  };
}

/** Listener auth with an operator key holding the `admin` scope and an agent key without it. */
export function opsAndAgentKeys(opsKey: string, agentKey: string) {
  return {
    type: 'apiKeys' as const,
    keys: [
      { name: 'ops', key: opsKey, scopes: ['admin'] },
      { name: 'agent', key: agentKey },
    ],
  };
}

/** A real SDK client over Streamable HTTP. */
export async function httpClient(url: URL | string, headers?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined),
  );
  return client;
}

/**
 * A 2026-07-28 client that does not answer input-required rounds by itself:
 * `first` returns the question (with its `requestState`), `retry` sends an answer.
 */
export async function roundTripClient(url: URL, headers: Record<string, string>) {
  const client = new Client(
    { name: 'gateway-round-trip', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: false },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  const send = (params: Record<string, unknown>) =>
    client.callTool(params as never, { allowInputRequired: true }) as Promise<unknown>;
  return {
    first: async (name: string, args: Record<string, unknown>) =>
      (await send({ name, arguments: args })) as { resultType?: string; requestState: string },
    retry: async (name: string, args: Record<string, unknown>, requestState: string, answer: unknown) =>
      (await send({
        name,
        arguments: args,
        inputResponses: { sluice_approval: answer },
        requestState,
      })) as CallToolResult,
    close: () => client.close(),
  };
}

/** The JSON-RPC error a request failed with, as the SDK client read it off the wire (core's fixture, for this rootDir). */
export function rpcFailure(request: Promise<unknown>): Promise<{ code: unknown; message: unknown; data: unknown }> {
  return request.then(
    () => {
      throw new Error('the request was answered, not refused');
    },
    (error: unknown) => {
      const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
      return { code, message, data };
    },
  );
}

export function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
): Promise<CallToolResult> {
  return client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) });
}

/** A temporary folder holding a config file; `remove()` deletes it. */
export function tempConfig(
  config: unknown,
  name = 'sluice.config.json',
): { dir: string; file: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-gateway-'));
  const file = join(dir, name);
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  return { dir, file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliRun {
  readonly child: ChildProcess;
  /** Everything written to stderr so far. */
  stderr(): string;
  stdout(): string;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
  /** Resolves with the first JSON log record with this event. */
  event(name: string): Promise<Record<string, unknown>>;
}

/**
 * Runs `sluice <args>` as a child process, from its sources (or its build: see `CLI_ARGS`). `typescript`: always
 * from its sources through tsx, which also loads the TypeScript modules a config names (plugins.custom).
 */
export function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  { typescript = false }: { typescript?: boolean } = {},
): CliRun {
  const child = spawn(process.execPath, [...(typescript ? FROM_SOURCE : CLI_ARGS), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  const waiters: { name: string; resolve: (record: Record<string, unknown>) => void }[] = [];
  const scan = (): void => {
    for (const line of err.split('\n')) {
      if (!line.startsWith('{')) continue;
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      for (const waiter of waiters.filter((w) => w.name === record.event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(record);
      }
    }
  };
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    scan();
  });
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stderr: () => err,
    stdout: () => out,
    exited,
    event: (name) =>
      new Promise((resolve, reject) => {
        waiters.push({ name, resolve });
        scan();
        void exited.then((code) => reject(new Error(`sluice exited (${code}) before logging ${name}:\n${err}`)));
      }),
  };
}

/** Polls until `check` holds; fails with `what` after a while. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The value of one sample in a Prometheus exposition, or undefined when the line is absent. */
export function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

export interface Served {
  readonly run: CliRun;
  readonly url: URL;
  stop(): Promise<void>;
}

/** A gateway started in this process: its HTTP listener's URL and what it logged. */
export interface InProcessReplica {
  readonly gateway: Gateway;
  readonly url: URL;
  readonly logs: CapturedLogger;
}

/**
 * `count` gateways in this process on one config (replicas of one fleet when
 * the config names a shared store), each handed to `closeLater` as it starts.
 */
export async function startReplicas(
  config: GatewayConfigInput,
  count: number,
  closeLater: (close: () => Promise<unknown>) => void,
): Promise<InProcessReplica[]> {
  const replicas: InProcessReplica[] = [];
  for (let i = 0; i < count; i++) {
    const logs = captureLogger();
    const gateway = createGateway(config, { logger: logs.logger });
    closeLater(() => gateway.close());
    const url = (await gateway.start()).http?.url as URL;
    replicas.push({ gateway, url, logs });
  }
  return replicas;
}

/** Runs `sluice serve` on a config, with a bounded heap, until the gateway is ready. */
export async function serve(config: Record<string, unknown>, env: Record<string, string> = {}): Promise<Served> {
  const file = tempConfig(config);
  const run = runCli(['serve', '--config', file.file], { NODE_OPTIONS: '--max-old-space-size=96', ...env });
  const ready = await run.event('gateway.ready');
  return {
    run,
    url: new URL(String(ready.url)),
    stop: async () => {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
      await run.exited;
      file.remove();
    },
  };
}

/** The `sluice` command in this process: its exit code and what it wrote. */
export async function runMain(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main(args, { stdout, stderr, env });
  return { code, out, err };
}
