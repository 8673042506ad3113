// A real `sluice serve` process, attacked as an adversary would over loopback:
// hostile clients on one side, a scripted hostile upstream (over stdio and over
// Streamable HTTP, in child processes) on the other. Every attack must leave
// the gateway up and answering normal calls.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, sample, serve } from './helpers.js';
import type { Served } from './helpers.js';

const HOSTILE = fileURLToPath(new URL('../../../test/robustness/fixtures/hostile-upstream.mjs', import.meta.url));
const SECRET = 'argv-secret-Qx7k2';
// Characters a URL query percent-encodes: the secret travels in that form too.
const QUERY_SECRET = 'q/s3cr3t+é=&';
const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'hostile-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Rpc {
  readonly status: number;
  readonly body: string;
  readonly result?: { content?: { type: string; text?: string }[]; isError?: boolean; _meta?: Record<string, unknown> };
  readonly error?: { code: number; message: string };
}

let nextId = 1;

/** A 2026-07-28 request over plain fetch; the last JSON-RPC response in the body. */
async function rpc(
  url: URL,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Rpc> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: { ...ENVELOPE } } }),
  });
  const body = await response.text();
  const lines = body.includes('data:')
    ? body
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5))
    : [body];
  const last = lines.reverse().find((l) => l.includes('"id"'));
  const parsed = last ? (JSON.parse(last) as Omit<Rpc, 'status' | 'body'>) : {};
  return { status: response.status, body, ...parsed };
}

/** A 2026-07-28 `tools/call` whose params are given as JSON text; the raw body of the answer. */
async function post(url: URL, paramsJson: string): Promise<string> {
  const envelope = JSON.stringify(ENVELOPE).slice(1, -1);
  const params = paramsJson.includes('"_meta":{')
    ? paramsJson.replace('"_meta":{', `"_meta":{${envelope},`)
    : `${paramsJson.slice(0, -1)},"_meta":{${envelope}}}`;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': 'hs_echo',
    },
    body: `{"jsonrpc":"2.0","id":${nextId++},"method":"tools/call","params":${params}}`,
  });
  return response.text();
}

const callTool = (url: URL, name: string, args: Record<string, unknown> = {}, headers?: Record<string, string>) =>
  rpc(url, 'tools/call', { name, arguments: args }, headers);
const textOf = (r: Rpc): string => (r.result?.content ?? []).map((c) => c.text ?? '').join('\n');
const codeOf = (r: Rpc): string | undefined =>
  (r.result?._meta?.['dev.sluice/error'] as { code?: string } | undefined)?.code;

/** Starts the hostile upstream over HTTP and reads its URL. */
async function hostileHttp(env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [HOSTILE, 'http'], { env: { ...process.env, ...env }, stdio: 'pipe' });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!.trim());
    });
    child.once('exit', () => reject(new Error('the hostile upstream exited')));
  });
  return { child, url };
}

const alive = (served: Served): boolean => served.run.child.exitCode === null && served.run.child.signalCode === null;

describe('sluice serve against hostile clients and upstreams', () => {
  let upstream: { child: ChildProcess; url: string };
  let gw: Served;
  // What beforeAll started, to stop in reverse order: nothing, if it failed before starting it.
  const stops: (() => unknown)[] = [];

  beforeAll(async () => {
    upstream = await hostileHttp({ HOSTILE_GET_EVENT_BYTES: String(100 * 2 ** 20) });
    stops.unshift(() => upstream.child.kill('SIGKILL'));
    gw = await serve(
      {
        listen: { http: { port: 0 } },
        logLevel: 'debug',
        upstreams: [
          {
            name: 'hs',
            namespace: 'hs',
            connection: { type: 'stdio', command: process.execPath, args: [HOSTILE, '--token=${HOSTILE_SECRET}'] },
          },
          {
            name: 'hh',
            namespace: 'hh',
            connection: { type: 'http', url: `${upstream.url}?key=\${HOSTILE_QUERY_SECRET}` },
          },
        ],
        plugins: { chaining: {} },
      },
      { HOSTILE_SECRET: SECRET, HOSTILE_QUERY_SECRET: encodeURIComponent(QUERY_SECRET) },
    );
    stops.unshift(() => gw.stop());
  }, 60_000);

  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('refuses deeply nested arguments with -32602 and keeps the upstream connection of everyone else', async () => {
    const pid = textOf(await callTool(gw.url, 'hs_pid'));
    const running = callTool(gw.url, 'hs_slow', { ms: 500 });
    // Built as text: serialising it here would overflow the test's own stack.
    const deep = `${'['.repeat(4_500)}"leaf"${']'.repeat(4_500)}`;
    const refused = await post(gw.url, `{"name":"hs_echo","arguments":{"deep":${deep}}}`);
    expect(refused).toContain('-32602');
    expect(refused).toMatch(/deep/i);
    expect(textOf(await running)).toBe('slept 500');
    expect(textOf(await callTool(gw.url, 'hs_pid'))).toBe(pid);
    const deepMeta = `${'{"a":'.repeat(200)}{}${'}'.repeat(200)}`;
    const metaRefused = await post(gw.url, `{"name":"hs_echo","arguments":{},"_meta":{"deep":${deepMeta}}}`);
    expect(metaRefused).toContain('-32602');
  });

  it('refuses an initialize whose params are too large, and still serves a normal client', async () => {
    const clientInfo = { name: 'x'.repeat(3_500_000), version: '1' };
    for (let i = 0; i < 40; i++) {
      const response = await fetch(gw.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo },
        }),
      });
      const body = await response.text();
      expect(response.status, body.slice(0, 300)).toBeGreaterThanOrEqual(400);
      expect(body).toMatch(/initialize/i);
    }
    expect(alive(gw), gw.run.stderr().slice(-2000)).toBe(true);
    expect(textOf(await callTool(gw.url, 'hs_echo', { ok: 1 }))).toBe('{"ok":1}');
  }, 60_000);

  it('refuses a foreign Host (DNS rebinding) on /metrics and on the MCP endpoint, and an Origin on another port', async () => {
    const get = (path: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: gw.url.port, path, headers }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get('/metrics', { host: `127.0.0.1:${gw.url.port}` })).toBe(200);
    expect(await get('/metrics', { host: `localhost:${gw.url.port}` })).toBe(200);
    expect(await get('/metrics', { host: `rebind.attacker.example:${gw.url.port}` })).toBe(403);
    expect(await get('/mcp', { host: 'rebind.attacker.example' })).toBe(403);
    expect(await get('/metrics', { host: `127.0.0.1:${gw.url.port}`, origin: 'http://localhost:1' })).toBe(403);
    expect(await get('/metrics', { host: `127.0.0.1:${gw.url.port}`, origin: `http://localhost:${gw.url.port}` })).toBe(
      200,
    );
  });

  it('coalesces the progress of an upstream that floods it for a client that stops reading', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'hs_progress_flood', arguments: { count: 200_000 }, _meta: { ...ENVELOPE, progressToken: 't' } },
    });
    let received = '';
    const done = new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: gw.url.port,
          path: gw.url.pathname,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': MODERN,
            'mcp-method': 'tools/call',
            'mcp-name': 'hs_progress_flood',
          },
        },
        (res) => {
          // Stop reading until the upstream has sent all its notes.
          res.pause();
          res.on('data', (c: Buffer) => (received += c.toString()));
          res.on('end', resolve);
          // Long enough for the upstream to send every note; on the old gateway they all pile up meanwhile.
          setTimeout(() => res.resume(), 8_000);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    await done;
    expect(received).toContain('sent 200000');
    const notes = received.split('notifications/progress').length - 1;
    expect(notes).toBeLessThan(5_000);
    expect(alive(gw), gw.run.stderr().slice(-2000)).toBe(true);
    expect(textOf(await callTool(gw.url, 'hs_echo', { after: 'flood' }))).toBe('{"after":"flood"}');
  }, 120_000);

  it('refuses an x-sluice-exclude-tools header of more patterns than it reads, instead of ignoring the rest', async () => {
    const patterns = [...Array.from({ length: 64 }, (_, i) => `nothing_${i}`), 'hs_echo'].join(',');
    const answer = await callTool(gw.url, 'hs_echo', { x: 1 }, { 'x-sluice-exclude-tools': patterns });
    expect(textOf(answer)).not.toBe('{"x":1}');
    expect(answer.error?.code ?? codeOf(answer)).toBeDefined();
    expect(answer.error?.message ?? textOf(answer)).toMatch(/x-sluice-exclude-tools/);
    const listed = await rpc(gw.url, 'tools/list', {}, { 'x-sluice-exclude-tools': patterns });
    expect(listed.error?.message).toMatch(/x-sluice-exclude-tools/);
  });

  it('validates an upstream schema with a catastrophic pattern in linear time (output, chained input)', async () => {
    const out = await callTool(gw.url, 'hs_redos_out', { n: 45 });
    expect(codeOf(out)).toBe('UPSTREAM_INVALID_RESPONSE');
    const chained = await callTool(gw.url, 'hs_redos_next', { n: 45, tool: 'redos_in' });
    expect(JSON.stringify(chained)).not.toContain('accepted 46');
    // An upstream's directive names its own tool; chaining checks the arguments against that tool's schema.
    expect(JSON.stringify(chained)).toMatch(/must match pattern/);
    expect(textOf(await callTool(gw.url, 'hs_redos_in', { s: 'aaaa' }))).toBe('accepted 4');
  }, 60_000);

  it('fails only the call an HTTP upstream answers with 500, not the calls of others', async () => {
    const running = callTool(gw.url, 'hh_slow', { ms: 800 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const failed = await callTool(gw.url, 'hh_fail500');
    expect(codeOf(failed)).toBe('UPSTREAM_ERROR');
    expect(textOf(await running)).toBe('slept 800');
    expect(textOf(await callTool(gw.url, 'hh_echo', { after: 500 }))).toBe('{"after":500}');
  });

  it('stops reading an HTTP upstream answer, and an event of its GET stream, past the default read cap', async () => {
    const huge = await callTool(gw.url, 'hh_huge', { bytes: 100 * 2 ** 20 });
    expect(codeOf(huge)).toBe('UPSTREAM_RESPONSE_TOO_LARGE');
    const writtenOf = async () =>
      JSON.parse(textOf(await callTool(gw.url, 'hh_written'))) as { post: number; get: number };
    let last = -1;
    await eventually(
      async () => {
        const { get } = await writtenOf();
        const settled = get > 0 && get === last;
        last = get;
        return settled;
      },
      'the GET event stream stops growing',
      60_000,
    );
    const { post, get } = await writtenOf();
    expect(post).toBeLessThan(40 * 2 ** 20);
    expect(get).toBeLessThan(40 * 2 ** 20);
    expect(alive(gw), gw.run.stderr().slice(-2000)).toBe(true);
  }, 120_000);

  it('counts only its own refusals in metrics, under a bounded set of codes', async () => {
    for (let i = 0; i < 30; i++) await callTool(gw.url, 'hs_label', { code: `UPSTREAM_MADE_UP_${i}` });
    await callTool(gw.url, 'hs_label', { code: 'Z'.repeat(1024) });
    const metrics = await (await fetch(new URL('/metrics', gw.url))).text();
    expect(metrics).not.toContain('UPSTREAM_MADE_UP_');
    expect(metrics).not.toContain('Z'.repeat(100));
    expect(sample(metrics, 'sluice_calls_total{tool="hs_label",outcome="tool_error"}')).toBe(31);
    expect(sample(metrics, 'sluice_calls_total{tool="hs_label",outcome="refused"}')).toBeUndefined();
  });

  it('redacts configured secrets (stdio args, percent-encoded URL query values) from results and logs', async () => {
    const viaStdio = await callTool(gw.url, 'hs_leak');
    const viaHttp = await callTool(gw.url, 'hh_leak');
    expect(codeOf(viaStdio)).toBe('UPSTREAM_ERROR');
    expect(codeOf(viaHttp)).toBe('UPSTREAM_ERROR');
    const forms = [
      SECRET,
      QUERY_SECRET,
      encodeURIComponent(QUERY_SECRET),
      new URLSearchParams({ k: QUERY_SECRET }).toString().slice(2),
    ];
    for (const form of forms) {
      expect(JSON.stringify(viaStdio)).not.toContain(form);
      expect(JSON.stringify(viaHttp)).not.toContain(form);
      expect(gw.run.stderr()).not.toContain(form);
    }
    expect(textOf(viaStdio)).toContain('[redacted]');
    expect(textOf(viaHttp)).toContain('[redacted]');
  });
});

describe('sluice serve against session floods and slow clients', () => {
  let gw: Served;
  const stops: (() => unknown)[] = [];

  beforeAll(async () => {
    gw = await serve({
      listen: {
        http: {
          port: 0,
          maxSessions: 20,
          sessionHandshakeMs: 60_000,
          headersTimeoutMs: 1_000,
          requestTimeoutMs: 2_000,
          maxConnections: 16,
        },
      },
      upstreams: [
        { name: 'hs', namespace: 'hs', connection: { type: 'stdio', command: process.execPath, args: [HOSTILE] } },
      ],
    });
    stops.push(() => gw.stop());
  }, 60_000);
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  const legacy = async (body: unknown, session?: string): Promise<Response> =>
    fetch(gw.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
      },
      body: JSON.stringify(body),
    });
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  };

  it('lets a new 2025-11-25 client in after a flood of bare initialize requests filled the session cap', async () => {
    for (let i = 0; i < 200; i++) await (await legacy(initialize)).text();
    const opened = await legacy(initialize);
    expect(opened.status).toBe(200);
    await opened.text();
    const session = opened.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
    await (await legacy({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
    const called = await legacy(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'hs_echo', arguments: { in: 1 } } },
      session,
    );
    expect(await called.text()).toContain('{\\"in\\":1}');
    // The flood goes on; the client that finished its handshake keeps its session.
    for (let i = 0; i < 100; i++) await (await legacy(initialize)).text();
    const again = await legacy(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'hs_echo', arguments: { in: 2 } } },
      session,
    );
    expect(await again.text()).toContain('{\\"in\\":2}');
  }, 60_000);

  it('closes a connection whose headers trickle in, and refuses connections past the cap', async () => {
    const socket = net.connect(Number(gw.url.port), '127.0.0.1');
    const closed = new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (c: Buffer) => (got += c.toString()));
      socket.on('close', () => resolve(got));
    });
    socket.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const trickle = setInterval(() => socket.write('x-slow: 1\r\n'), 200);
    const answer = await closed;
    clearInterval(trickle);
    expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);

    const idle = await Promise.all(
      Array.from(
        { length: 16 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(Number(gw.url.port), '127.0.0.1', () => resolve(s));
          }),
      ),
    );
    const extra = net.connect(Number(gw.url.port), '127.0.0.1');
    await new Promise<void>((resolve) => extra.on('close', () => resolve()));
    for (const s of idle) s.destroy();
    expect(alive(gw)).toBe(true);
  }, 30_000);
});

describe('sluice serve with a Redis store it cannot reach', () => {
  const PASSWORD = 'redis-pass-Vb81x';
  let gw: Served;
  const stops: (() => unknown)[] = [];

  beforeAll(async () => {
    gw = await serve(
      {
        listen: { http: { port: 0 } },
        logLevel: 'debug',
        // Port 1 refuses connections: the store is unavailable from the start.
        store: { redis: 'redis://127.0.0.1:1/?password=${REDIS_PASSWORD}', connectTimeoutMs: 500 },
        upstreams: [
          { name: 'hs', namespace: 'hs', connection: { type: 'stdio', command: process.execPath, args: [HOSTILE] } },
        ],
        plugins: { concurrency: { tools: { hs_echo: { maxActive: 1, maxQueue: 0 } } } },
      },
      { REDIS_PASSWORD: PASSWORD },
    );
    stops.push(() => gw.stop());
  }, 60_000);
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('tells clients only that the store is unavailable, and keeps the password out of results and logs', async () => {
    const answer = await callTool(gw.url, 'hs_echo', { x: 1 });
    const seen = JSON.stringify(answer);
    expect(seen).toMatch(/store is unavailable/);
    expect(seen).not.toContain('127.0.0.1:1');
    expect(seen).not.toContain(PASSWORD);
    await eventually(() => gw.run.stderr().includes('store.redis'), 'the store logs its loss');
    expect(gw.run.stderr()).not.toContain(PASSWORD);
  });
});
