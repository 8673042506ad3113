import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@sluice/core';
import { metaOf, textOf } from '@sluice/testing';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once the gateway logs that it is ready. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('"event":"gateway.ready"')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}):\n${seen}`)));
  });
}

let child: ChildProcess | undefined;
let client: Client | undefined;
let port: number;
let ledgerDir: string;

beforeAll(async () => {
  port = await freePort();
  ledgerDir = mkdtempSync(join(tmpdir(), 'sluice-example-'));
  // The CLI from its sources, on the example's own config, as `pnpm start` runs it from the build.
  child = spawn(
    process.execPath,
    [
      '--conditions=sluice:source',
      '--import',
      'tsx',
      'packages/gateway/src/cli.ts',
      'serve',
      '--config',
      'examples/gateway/sluice.config.json',
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, SLUICE_PORT: String(port), SLUICE_RISK_LEDGER: join(ledgerDir, 'ledger.json') },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  await ready(child);
  client = new Client({ name: 'example-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
});

afterAll(async () => {
  await client?.close().catch(() => {});
  const running = child;
  if (running && running.exitCode === null) {
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  }
  rmSync(ledgerDir, { recursive: true, force: true });
});

const call = (name: string, args: Record<string, unknown>) =>
  client!.callTool({ name, arguments: args }) as Promise<CallToolResult>;

describe('the example gateway', () => {
  it('exposes the tools of both upstreams, minus those its config denies or its risk ceiling hides', async () => {
    const names = (await client!.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['everything_echo', 'everything_get-sum', 'desk_check_account', 'desk_open_ticket']),
    );
    expect(names).not.toContain('everything_get-env');
    expect(names).not.toContain('everything_gzip-file-as-resource');
  });

  it('runs one script over the tools of both upstreams with code mode', async () => {
    const result = await call('execute_code', {
      code:
        "const account = await desk.check_account({ customerId: 'c-9' });" +
        "const echo = await everything.echo({ message: 'both upstreams' });" +
        'return { account, echo };',
    });
    expect(result.structuredContent).toEqual({
      result: { account: 'Account c-9 is active.', echo: 'Echo: both upstreams' },
      logs: [],
    });
  });

  it('calls a tool of the everything server over stdio', async () => {
    expect(textOf(await call('everything_get-sum', { a: 2, b: 3 }))).toBe('The sum of 2 and 3 is 5.');
  });

  it('calls the demo upstream, whose nextTool directive the chaining plugin follows in the same call', async () => {
    expect(textOf(await call('desk_check_account', { customerId: 'c-7' }))).toBe('Account c-7 is active.');
    const chained = await call('desk_check_account', { customerId: 'locked-42' });
    expect(textOf(chained)).toMatch(/^Ticket T-\d+ opened for locked-42 \(high urgency\)\.$/);
    expect(metaOf<{ steps: { tool: string }[] }>(chained, 'dev.sluice/chain')?.steps.map((s) => s.tool)).toEqual([
      'desk_open_ticket',
    ]);
  });

  it('serves metrics beside the MCP endpoint, and stops cleanly on SIGTERM', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('sluice_calls_total{tool="everything_get-sum",outcome="ok"} 1');
    expect(metrics).toContain('sluice_upstream_up{upstream="desk"} 1');
    const gateway = child!;
    const exited = new Promise((resolve) => gateway.once('exit', resolve));
    gateway.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
