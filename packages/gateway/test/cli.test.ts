import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { compileSchema, createServer } from '@sluice/core';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import { GatewayErrorCode, interpolateEnv } from '@sluice/gateway';
import { parseCommandLine } from '../src/cli-args.js';
import { z } from 'zod';
import {
  CLI_SOURCE,
  REPO_ROOT,
  call,
  eventually,
  fixtureUpstream,
  httpClient,
  runCli,
  runMain,
  sample,
  tempConfig,
} from './helpers.js';
import '@sluice/http';

const TOKEN = 'tok-7f3a9c21e4';

/** An HTTP upstream in this process: a Sluice server whose tool checks the bearer token it was sent. */
let remote: SluiceServer;
let remoteListener: HttpListener;

beforeAll(async () => {
  remote = createServer({ name: 'remote', version: '1.0.0', logger: captureLogger().logger });
  remote.tool({
    name: 'greet',
    inputSchema: z.object({ who: z.string() }),
    handler: ({ who }, ctx) => ({
      content: [
        { type: 'text', text: `hello ${who}${ctx.headers.authorization === `Bearer ${TOKEN}` ? ' (authorized)' : ''}` },
      ],
    }),
  });
  remoteListener = await remote.listen();
});

afterAll(async () => {
  await remote.close();
});

const NO_STACK = /\n\s+at /;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Serves one long-lived stdio upstream, starts a long call on it, sends
 * SIGTERM, then SIGTERM again while the gateway drains; checks the forced
 * exit, then hands the upstream's pid to `afterExit` the moment the gateway
 * has exited.
 */
async function secondSigtermWhileDraining(afterExit: (upstreamPid: number) => Promise<void>): Promise<void> {
  const longLived = fileURLToPath(new URL('./fixtures/long-lived-upstream.mjs', import.meta.url));
  const config = tempConfig({
    listen: { http: { port: 0 } },
    upstreams: [
      {
        name: 'busy',
        namespace: 'busy',
        connection: { type: 'stdio', command: process.execPath, args: [longLived] },
      },
    ],
  });
  const run = runCli(['serve', '--config', config.file]);
  let upstreamPid: number | undefined;
  try {
    const ready = await run.event('gateway.ready');
    const client = await httpClient(String(ready.url));
    upstreamPid = Number(textOf(await call(client, 'busy_pid')));
    expect(alive(upstreamPid)).toBe(true);
    // A long call keeps the upstream busy (and its event loop alive) and the gateway draining.
    const running = call(client, 'busy_work', { ms: 60_000 }).catch(() => undefined);
    const metrics = new URL('/metrics', String(ready.url));
    await eventually(
      async () => sample(await (await fetch(metrics)).text(), 'sluice_calls_in_flight{tool="busy_work"}') === 1,
      'the long call in flight',
    );
    run.child.kill('SIGTERM');
    await run.event('gateway.stopping');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(1);
    await afterExit(upstreamPid);
    expect(run.stderr()).toContain('"event":"gateway.forced_exit"');
    await running;
    await client.close().catch(() => {});
  } finally {
    run.child.kill('SIGKILL');
    if (upstreamPid !== undefined && alive(upstreamPid)) process.kill(upstreamPid, 'SIGKILL');
    config.remove();
  }
}

describe('sluice serve', () => {
  it('serves stdio and HTTP upstreams to a real client, then drains a running call on SIGTERM and exits 0', async () => {
    const config = tempConfig({
      listen: { http: { port: 0 } },
      upstreams: [
        fixtureUpstream('local'),
        {
          name: 'remote',
          namespace: 'remote',
          connection: {
            type: 'http',
            url: remoteListener.url.href,
            headers: { authorization: 'Bearer ${GW_TEST_TOKEN}' },
          },
        },
      ],
      plugins: { loopGuard: {}, chaining: {} },
    });
    const run = runCli(['serve', '--config', config.file], { GW_TEST_TOKEN: TOKEN });
    try {
      const ready = await run.event('gateway.ready');
      const client = await httpClient(String(ready.url));
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['local_echo', 'local_sleep', 'remote_greet']));
      expect(textOf(await call(client, 'local_echo', { text: 'through stdio' }))).toBe('through stdio');
      expect(textOf(await call(client, 'remote_greet', { who: 'http' }))).toBe('hello http (authorized)');

      const metrics = new URL('/metrics', String(ready.url));
      const running = call(client, 'local_sleep', { ms: 300 });
      await eventually(
        async () => sample(await (await fetch(metrics)).text(), 'sluice_calls_in_flight{tool="local_sleep"}') === 1,
        'the sleep call in flight',
      );
      run.child.kill('SIGTERM');
      expect(textOf(await running)).toBe('slept 300');
      expect(await run.exited).toBe(0);
      expect(run.stderr()).toContain('"event":"gateway.stopped"');
      expect(run.stderr()).not.toContain(TOKEN);
      await client.close().catch(() => {});
    } finally {
      run.child.kill('SIGKILL');
      config.remove();
    }
  });

  it('on a second SIGTERM while draining, exits at once and still ends its stdio upstreams', async () => {
    await secondSigtermWhileDraining(async (upstreamPid) => {
      await eventually(() => !alive(upstreamPid), 'the stdio upstream to end');
    });
  });

  it('on a second SIGTERM under CPU contention, kills and reaps its stdio upstreams before it exits', async () => {
    // Busy processes compete for every core, so a child told to end at exit would still be running when we look.
    const burners = [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    try {
      await secondSigtermWhileDraining((upstreamPid) => {
        // No waiting here: the gateway must have ended its child, and reaped it, before it exited.
        expect(alive(upstreamPid)).toBe(false);
        return Promise.resolve();
      });
    } finally {
      for (const burner of burners) burner.kill('SIGKILL');
    }
  });

  it('serves over stdio with logs on stderr only, and ends when its client closes stdin', async () => {
    const config = tempConfig({ listen: { stdio: true }, upstreams: [fixtureUpstream('local')] });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--conditions=sluice:source', '--import', 'tsx', CLI_SOURCE, 'serve', '--config', config.file],
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect(textOf(await call(client, 'local_echo', { text: 'over stdio' }))).toBe('over stdio');
      const pid = transport.pid as number;
      await client.close();
      await eventually(() => !alive(pid), 'the gateway to exit');
      expect(stderr).toContain('"event":"gateway.ready"');
      expect(stderr).toContain('"event":"gateway.stopping","reason":"stdin closed"');
    } finally {
      await client.close().catch(() => {});
      config.remove();
    }
  });

  it('fails a bad config at start with exit code 2 and one readable line naming the field', async () => {
    const config = tempConfig({
      upstreams: [{ name: 'remote', connection: { type: 'http', url: 'localhost:8080/mcp' } }],
      plugins: { egress: { maxPayloadBytes: 'lots' } },
    });
    const run = runCli(['serve', '--config', config.file]);
    try {
      expect(await run.exited).toBe(2);
      expect(run.stderr()).toBe(
        `sluice: Invalid gateway config in ${config.file}:\n  upstreams.0.connection.url: must be an http or https URL\n  plugins.egress.maxPayloadBytes: Invalid input: expected number, received string\n`,
      );
      expect(run.stdout()).toBe('');
    } finally {
      config.remove();
    }
  });

  it('fails with exit code 2 naming a missing environment variable, and never prints the values of those that are set', async () => {
    const config = tempConfig({
      upstreams: [
        {
          name: 'r',
          connection: {
            type: 'http',
            url: 'http://127.0.0.1:9/mcp',
            headers: { a: '${GW_TEST_TOKEN}', b: '${GW_UNSET_VAR}' },
          },
        },
      ],
    });
    const run = runCli(['serve', '--config', config.file], { GW_TEST_TOKEN: TOKEN });
    try {
      expect(await run.exited).toBe(2);
      expect(run.stderr()).toBe(
        'sluice: upstreams.0.connection.headers.b: environment variable GW_UNSET_VAR is not set\n',
      );
    } finally {
      config.remove();
    }
  });

  it('exits 1 when it cannot listen, saying the address is taken', async () => {
    const config = tempConfig({ listen: { http: { port: remoteListener.port } } });
    const run = runCli(['serve', '--config', config.file]);
    try {
      expect(await run.event('gateway.start_failed')).toMatchObject({ code: GatewayErrorCode.START_FAILED });
      expect(await run.exited).toBe(1);
      expect(run.stderr()).toContain(
        `sluice: the gateway could not start: 127.0.0.1:${remoteListener.port} is already in use\n`,
      );
      expect(run.stderr()).not.toMatch(NO_STACK);
    } finally {
      config.remove();
    }
  });
  it('names the metrics address when telemetry.metricsListen is taken', async () => {
    const config = tempConfig({
      listen: { http: { port: 0 } },
      telemetry: { metricsListen: { host: '127.0.0.1', port: remoteListener.port } },
    });
    const run = runCli(['serve', '--config', config.file]);
    try {
      expect(await run.exited).toBe(1);
      expect(run.stderr()).toContain(
        `sluice: the gateway could not start: the metrics address 127.0.0.1:${remoteListener.port} (telemetry.metricsListen) is already in use\n`,
      );
    } finally {
      config.remove();
    }
  });

  it('finds a taken port before it spawns any upstream, naming the port', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'sluice-port-')), 'spawned');
    const config = tempConfig({
      listen: { http: { port: remoteListener.port } },
      upstreams: [
        {
          name: 'witness',
          namespace: 'witness',
          // Leaves a file behind if it is ever started.
          connection: {
            type: 'stdio',
            command: process.execPath,
            args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, '')`],
          },
        },
      ],
    });
    const run = runCli(['serve', '--config', config.file]);
    try {
      expect(await run.exited).toBe(1);
      expect(run.stderr()).toContain(
        `sluice: the gateway could not start: 127.0.0.1:${remoteListener.port} is already in use\n`,
      );
      expect(existsSync(marker)).toBe(false);
    } finally {
      config.remove();
      rmSync(dirname(marker), { recursive: true, force: true });
    }
  });
});

describe('the command line', () => {
  it('refuses an unknown command, a stray argument or a misplaced option with USAGE', () => {
    for (const argv of [['frobnicate'], ['serve', 'extra'], ['serve', '--json'], []]) {
      expect(() => parseCommandLine(argv)).toThrow(expect.objectContaining({ code: GatewayErrorCode.USAGE }));
    }
    expect(parseCommandLine(['check', '--json'])).toMatchObject({ kind: 'check', json: true });
  });
});

describe('sluice check', () => {
  it('lists the tools that would be exposed with their risk, the skipped ones with reasons, and each upstream health; an unreachable upstream exits 1', async () => {
    const config = tempConfig({
      upstreams: [
        fixtureUpstream('home', { denyTools: ['sleep', 'hold'] }),
        { name: 'remote', namespace: 'remote', connection: { type: 'http', url: remoteListener.url.href } },
        { name: 'gone', connection: { type: 'http', url: 'http://127.0.0.1:9/mcp' }, connectTimeoutMs: 2000 },
      ],
      plugins: { risk: { maxRisk: 'L3', servers: { home: { trust: 'vendor-official' } } } },
    });
    const run = runCli(['check', '--config', config.file]);
    try {
      expect(await run.exited).toBe(1);
      const out = run.stdout();
      expect(out).toContain(`Config ${config.file} is valid.`);
      expect(out).toMatch(/^ {2}home +stdio +healthy +5 tools/m);
      expect(out).toMatch(/^ {2}remote +http +healthy +0 tools/m);
      expect(out).toMatch(/^ {2}gone +http +down +0 tools +\(.+\)/m);
      expect(out).toMatch(/^ {2}tool +upstream +risk +floors +scan hits$/m);
      expect(out).toMatch(/^ {2}home_echo +home +L\d +- +-$/m);
      expect(out).toMatch(/^ {2}home_sleep +home +core: +Denied by the denyTools patterns of upstream "home"$/m);
      expect(out).toMatch(/^ {2}remote_greet +remote +risk: +ABOVE_MAX_RISK: L\d is above maxRisk L3$/m);
      expect(out).toContain('Some upstreams could not be reached');
    } finally {
      config.remove();
    }
  });
});

describe('sluice schema, help and usage', () => {
  it('prints a JSON Schema that accepts the example config and rejects a bad one', async () => {
    const { code, out } = await runMain(['schema']);
    expect(code).toBe(0);
    const schema = JSON.parse(out) as Record<string, unknown>;
    expect(schema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
    });
    // The validator knows its own dialect; the body is checked under it.
    const body: Record<string, unknown> = { ...schema };
    delete body.$schema;
    const compiled = compileSchema(body, 'input', 'sluice-config');
    const example = fileURLToPath(new URL('../../../examples/gateway/sluice.config.json', import.meta.url));
    const written = interpolateEnv(JSON.parse(readFileSync(example, 'utf8')), {});
    expect(await compiled.validate(written)).toMatchObject({ ok: true });
    expect(await compiled.validate({ upstreams: [{ name: 'a', connection: { type: 'stdio' } }] })).toMatchObject({
      ok: false,
    });
    expect(await compiled.validate({ plugins: { concurrency: { default: { maxActive: 0 } } } })).toMatchObject({
      ok: false,
    });
  });

  it('prints help with exit code 0, and usage with exit code 2 for an unknown command or option', async () => {
    const help = await runMain(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('Usage: sluice <command>');
    const unknown = await runMain(['launch']);
    expect(unknown).toMatchObject({ code: 2, out: '' });
    expect(unknown.err).toMatch(/^sluice: unknown command "launch"\n\nUsage: sluice/);
    expect((await runMain(['serve', '--prot', '1'])).code).toBe(2);
    expect((await runMain([])).code).toBe(2);
  });
});
