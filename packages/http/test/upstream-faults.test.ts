import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/server';
import { CoreErrorCode, createServer, definePlugin } from '@sluice/core';
import type { Plugin, SluiceServer } from '@sluice/core';
import { captureLogger, errorOf, textOf } from '@sluice/testing';
import {
  STDIO_UPSTREAM,
  alive,
  call,
  connectClient,
  eventually,
  freePort,
} from '../../core/test/fixtures/upstream-helpers.js';
import '@sluice/http';
import '@sluice/upstream';

const FAST_RETRY = { initialDelayMs: 20, maxDelayMs: 100 };
const scratch = mkdtempSync(join(tmpdir(), 'sluice-upstream-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function gateway(plugins: Plugin[] = []) {
  const logs = captureLogger();
  const server = createServer({ name: 'gateway', version: '1.0.0', logger: logs.logger, plugins });
  return { server, logs };
}

function fixture(env?: Record<string, string>) {
  return { type: 'stdio' as const, command: process.execPath, args: [STDIO_UPSTREAM], ...(env ? { env } : {}) };
}

function healthChanges(logs: ReturnType<typeof captureLogger>, upstream: string): string[] {
  return logs
    .events('upstream.health')
    .filter((r) => r.upstream === upstream)
    .map((r) => String(r.to));
}

const stillServes = async (server: SluiceServer) => {
  server.tool({ name: 'local_ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
  await server.ready();
  expect(textOf(await server.call('local_ping'))).toBe('pong');
};

describe('an upstream that dies mid-call', () => {
  it('ends the call in flight with UPSTREAM_DISCONNECTED and reconnects to a new child with backoff', async () => {
    const { server, logs } = gateway();
    await server.import({ name: 'fixture', connection: fixture(), retry: FAST_RETRY });
    const { client } = await connectClient(server);
    const firstPid = Number(textOf(await call(client, 'pid')));
    expect(alive(firstPid)).toBe(true);

    const pending = call(client, 'sleep', { ms: 20_000 });
    await eventually(
      () => logs.events('upstream.stderr').some((r) => String(r.text).includes('sleeping 20000')),
      'the upstream to start sleeping',
    );
    process.kill(firstPid, 'SIGKILL');

    const result = await pending;
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: CoreErrorCode.UPSTREAM_DISCONNECTED, upstream: 'fixture' });
    expect(textOf(result)).toContain('upstream "fixture"');

    await eventually(
      () => server.upstreams()[0]?.health === 'healthy' && healthChanges(logs, 'fixture').includes('down'),
      'a reconnection',
    );
    const secondPid = Number(textOf(await call(client, 'pid')));
    expect(secondPid).not.toBe(firstPid);
    expect(healthChanges(logs, 'fixture')).toEqual(['healthy', 'down', 'healthy']);
    await stillServes(server);
    await client.close();
    await server.close();
    await eventually(() => !alive(secondPid), 'the child to end with the server');
  });

  it('answers UPSTREAM_UNAVAILABLE with a retry hint while the upstream stays down, and reports it as down', async () => {
    const { server } = gateway();
    await server.import({
      name: 'once',
      connection: fixture({ FIXTURE_START_ONCE: join(scratch, 'started-once') }),
      retry: FAST_RETRY,
    });
    const { client } = await connectClient(server);
    const pid = Number(textOf(await call(client, 'pid')));
    process.kill(pid, 'SIGKILL');
    await eventually(() => server.upstreams()[0]?.health === 'down', 'the upstream to be down');

    const result = await call(client, 'echo', { text: 'anyone?' });
    expect(errorOf(result)).toMatchObject({ code: CoreErrorCode.UPSTREAM_UNAVAILABLE, upstream: 'once' });
    expect(errorOf(result)?.retryAfterMs).toBeGreaterThanOrEqual(0);
    const [status] = server.upstreams();
    expect(status).toMatchObject({
      name: 'once',
      transport: 'stdio',
      health: 'down',
      tools: expect.arrayContaining(['echo']) as unknown,
    });
    expect(status?.lastError).toEqual(expect.stringMatching(/\S/));
    expect(status?.nextRetryAt).toBeGreaterThan(0);
    await stillServes(server);
    await client.close();
    await server.close();
  });
});

describe('an upstream that never answers', () => {
  it('ends the call with UPSTREAM_TIMEOUT after timeoutMs, marks the upstream degraded, and recovers on the next good call', async () => {
    const { server, logs } = gateway();
    await server.import({ name: 'fixture', connection: fixture(), timeoutMs: 300, retry: FAST_RETRY });
    const { client } = await connectClient(server);
    const result = await call(client, 'hang');
    expect(errorOf(result)).toMatchObject({ code: CoreErrorCode.UPSTREAM_TIMEOUT, upstream: 'fixture' });
    expect(textOf(result)).toContain('within 300 ms');
    expect(server.upstreams()[0]?.health).toBe('degraded');

    expect(textOf(await call(client, 'echo', { text: 'still there' }))).toBe('still there');
    expect(healthChanges(logs, 'fixture')).toEqual(['healthy', 'degraded', 'healthy']);
    await client.close();
    await server.close();
  });

  it('gives up on a handshake that never completes, reports it, and keeps retrying', async () => {
    // A process that reads stdin and never writes: it never answers `initialize`.
    const silent = { type: 'stdio' as const, command: process.execPath, args: ['-e', 'process.stdin.resume()'] };
    const { server } = gateway();
    const result = await server.import({
      name: 'silent',
      connection: silent,
      connectTimeoutMs: 200,
      retry: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    expect(result.imported).toEqual([]);
    expect(result.skipped).toEqual([
      {
        name: 'silent',
        reason: expect.stringMatching(/Upstream "silent" could not be reached .*retrying/) as unknown,
        by: 'core',
      },
    ]);
    expect(server.upstreams()[0]).toMatchObject({
      health: 'down',
      lastError: expect.stringMatching(/time/i) as unknown,
    });
    await server.close();
  });
});

describe('the start-up budget of a stdio upstream', () => {
  it('waits longer than 10 s for a stdio server to start (a first `npx -y` download), by default', async () => {
    // Starts serving after 10.5 s, as `npx -y <package>` does while it fetches the package.
    const start = `setTimeout(() => import(${JSON.stringify(pathToFileURL(STDIO_UPSTREAM).href)}), 10_500)`;
    const { server } = gateway();
    const result = await server.import({
      name: 'slow',
      connection: { type: 'stdio', command: process.execPath, args: ['-e', start] },
      retry: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    expect(result.skipped).toEqual([]);
    expect(result.imported.length).toBeGreaterThan(0);
    await server.close();
  }, 30_000);

  it('says, when it runs out, which setting to raise and that a package can be installed beforehand', async () => {
    const { server } = gateway();
    const result = await server.import({
      name: 'cold',
      connection: { type: 'stdio', command: process.execPath, args: ['-e', 'process.stdin.resume()'] },
      connectTimeoutMs: 200,
      retry: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    const reason = result.skipped[0]?.reason ?? '';
    expect(reason).toContain('did not answer its handshake within 200 ms (connectTimeoutMs)');
    expect(reason).toMatch(/raise connectTimeoutMs/);
    expect(reason).toMatch(/install its package beforehand/);
    expect(server.upstreams()[0]?.lastError).toContain('connectTimeoutMs');
    await server.close();
  });

  it('names the setting for an HTTP upstream too, without the advice about packages', async () => {
    const port = await freePort();
    // A listener that accepts and never answers.
    const hang = http.createServer(() => {});
    await new Promise<void>((resolve) => hang.listen(port, '127.0.0.1', resolve));
    const { server } = gateway();
    const result = await server.import({
      name: 'stuck',
      connection: { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
      connectTimeoutMs: 200,
      retry: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    expect(result.skipped[0]?.reason).toContain('within 200 ms (connectTimeoutMs)');
    expect(result.skipped[0]?.reason).not.toContain('package');
    await server.close();
    hang.closeAllConnections();
    hang.close();
  });
});

describe('an upstream that is down at start', () => {
  it('is reported and retried without holding up the others, and its tools appear when it comes up', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const { server, logs } = gateway();
    const other = new McpServer({ name: 'other', version: '1' });
    other.registerTool('hello', { description: 'Says hello' }, async () => ({
      content: [{ type: 'text', text: 'hello' }],
    }));

    const late = await server.import({
      name: 'late',
      namespace: 'late',
      connection: { type: 'http', url },
      retry: FAST_RETRY,
    });
    const fine = await server.import({ name: 'fine', connection: { type: 'in-process', server: other } });
    expect(late.imported).toEqual([]);
    expect(late.skipped[0]).toMatchObject({
      name: 'late',
      reason: expect.stringContaining('retrying in the background') as unknown,
    });
    expect(fine.imported).toEqual(['hello']);
    expect(server.upstreams().map((u) => [u.name, u.health])).toEqual([
      ['late', 'down'],
      ['fine', 'healthy'],
    ]);
    expect(logs.events('upstream.health').find((r) => r.upstream === 'late' && r.to === 'down')).toBeDefined();

    const { client, nextListChanged } = await connectClient(server);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['hello']);

    const upstream = createServer({ name: 'late-upstream', version: '1', logger: captureLogger().logger });
    upstream.tool({
      name: 'echo',
      inputSchema: z.object({ text: z.string() }),
      handler: ({ text }) => ({ content: [{ type: 'text', text }] }),
    });
    const changed = nextListChanged();
    const listener = await upstream.listen({ port });
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['hello', 'late_echo']);
    expect(textOf(await call(client, 'late_echo', { text: 'made it' }))).toBe('made it');
    expect(server.upstreams()[0]?.health).toBe('healthy');

    await client.close();
    await server.close();
    await listener.close();
    await upstream.close();
  });
});

describe('secrets', () => {
  it('never repeats configured header values in results, skipped reasons or logs', async () => {
    // An upstream that fails every request and echoes the credentials it was sent.
    const leaky = http.createServer((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`rejected credentials: ${req.headers.authorization ?? ''} / ${String(req.headers['x-api-key'] ?? '')}`);
    });
    await new Promise<void>((resolve) => leaky.listen(0, '127.0.0.1', resolve));
    const { port } = leaky.address() as import('node:net').AddressInfo;
    const { server, logs } = gateway();
    const result = await server.import({
      name: 'leaky',
      connection: {
        type: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { authorization: 'Bearer sekrit-token-123', 'x-api-key': 'key-456789' },
      },
      retry: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    const seen = [JSON.stringify(result), JSON.stringify(server.upstreams()), logs.text()].join('\n');
    expect(seen).toContain('rejected credentials');
    expect(seen).not.toContain('sekrit-token-123');
    expect(seen).not.toContain('key-456789');
    await server.close();
    await new Promise<void>((resolve) => leaky.close(() => resolve()));
  });
});

describe('response limits over HTTP', () => {
  it.each(['node', 'sdk'] as const)(
    'stops reading a response past responseLimitBytes instead of buffering it (%s transport)',
    async (transport) => {
      // A Streamable HTTP upstream whose tools/call answer never ends.
      let streamClosedEarly = false;
      const endless = http.createServer((req, res) => {
        if (req.method !== 'POST') return void res.writeHead(405).end();
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
          const reply = (result: unknown) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
          };
          if (message.method === 'initialize') {
            reply({
              protocolVersion: message.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'endless', version: '1' },
            });
            return;
          }
          if (message.id === undefined) return void res.writeHead(202).end();
          if (message.method === 'tools/list') {
            reply({ tools: [{ name: 'flood', inputSchema: { type: 'object' } }] });
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(`{"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`);
          const chunk = 'x'.repeat(16_384);
          const timer = setInterval(() => res.write(chunk), 1);
          res.on('close', () => {
            clearInterval(timer);
            streamClosedEarly = !res.writableFinished;
          });
        });
      });
      await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
      const { port } = endless.address() as import('node:net').AddressInfo;
      const cap = definePlugin({
        name: 'cap',
        version: '1.0.0',
        apply: ({ hooks }) =>
          hooks.import.tap('cap', (batch) => {
            for (const tool of batch.tools) tool.responseLimitBytes = 100_000;
            return batch;
          }),
      });
      const { server } = gateway([cap]);
      await server.import({
        name: 'endless',
        connection: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, transport },
        timeoutMs: 20_000,
      });
      const { client } = await connectClient(server);
      const result = await call(client, 'flood');
      expect(errorOf(result)).toMatchObject({ code: CoreErrorCode.UPSTREAM_RESPONSE_TOO_LARGE, upstream: 'endless' });
      await eventually(() => streamClosedEarly, 'the upstream response stream to be cut off');
      await client.close();
      await server.close();
      endless.closeAllConnections();
      await new Promise<void>((resolve) => endless.close(() => resolve()));
    },
  );
});

describe('a request that cannot be encoded for the upstream', () => {
  it('fails that call alone, without dropping the connection the other calls share', async () => {
    // A plugin hands the proxy a value JSON cannot hold: the error is raised before any byte is written.
    const bigint = definePlugin({
      name: 'bigint',
      version: '1.0.0',
      apply({ hooks }) {
        hooks.preCall.tap({ name: 'bigint', stage: 0 }, (ctx) => {
          if (ctx.arguments.poison === true) ctx.arguments = { text: 10n };
          return undefined;
        });
      },
    });
    const { server, logs } = gateway([bigint]);
    await server.import({ name: 'fixture', connection: fixture(), retry: FAST_RETRY });
    const { client } = await connectClient(server);
    const pid = textOf(await call(client, 'pid'));
    const running = call(client, 'sleep', { ms: 300 });

    const poisoned = await call(client, 'echo', { poison: true });
    expect(errorOf(poisoned)).toMatchObject({ code: CoreErrorCode.INVALID_ARGUMENTS, upstream: 'fixture' });
    expect(textOf(poisoned)).toContain('could not send');

    expect(textOf(await running)).toBe('slept 300');
    expect(textOf(await call(client, 'pid'))).toBe(pid);
    expect(healthChanges(logs, 'fixture')).not.toContain('down');
    await server.close();
  });
});
