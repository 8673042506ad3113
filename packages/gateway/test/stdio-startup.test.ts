// A stdio upstream launched the way most MCP configs launch one, `npx -y <package>`, may spend its first start
// downloading the package. `sluice serve` gives a stdio handshake a minute by default; when that runs out, the
// operator is told which setting to raise and that the package can be installed beforehand.
// The cold `npx -y` run fetches from the npm registry, so it runs only with SLUICE_NETWORK=1.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURE_UPSTREAM, call, httpClient, serve } from './helpers.js';
import type { Served } from './helpers.js';

const running: Served[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const served of running.splice(0)) await served.stop();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function serveOne(connection: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Served> {
  const served = await serve({
    listen: { http: { host: '127.0.0.1', port: 0 } },
    upstreams: [{ name: 'slow', namespace: 'slow', connection, ...extra }],
  });
  running.push(served);
  return served;
}

const logRecords = (served: Served): Record<string, unknown>[] =>
  served.run
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the start-up budget of a stdio upstream under sluice serve', () => {
  it('imports a stdio server that takes longer than 10 s to start, with no setting (a first npx download)', async () => {
    // Starts serving only after 10.5 s, past the 10 s that a handshake used to get.
    const start = `setTimeout(() => import(${JSON.stringify(pathToFileURL(FIXTURE_UPSTREAM).href)}), 10_500)`;
    const served = await serveOne({ type: 'stdio', command: process.execPath, args: ['-e', start] });
    const ready = logRecords(served).find((r) => r.event === 'gateway.ready');
    expect(ready?.upstreams).toEqual([expect.objectContaining({ name: 'slow', health: 'healthy' })]);
    const client = await httpClient(served.url);
    expect((await call(client, 'slow_echo', { text: 'late but here' })).content).toEqual([
      { type: 'text', text: 'late but here' },
    ]);
    await client.close();
  }, 40_000);

  it('tells the operator, when the budget runs out, to raise connectTimeoutMs or install the package beforehand', async () => {
    const served = await serveOne(
      { type: 'stdio', command: process.execPath, args: ['-e', 'process.stdin.resume()'] },
      { connectTimeoutMs: 300 },
    );
    const ready = logRecords(served).find((r) => r.event === 'gateway.ready');
    expect(ready?.upstreams).toEqual([expect.objectContaining({ name: 'slow', exposed: 0 })]);
    const reasons = served.run
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"upstream":"slow"') && line.includes('connectTimeoutMs'));
    expect(reasons.length).toBeGreaterThan(0);
    expect(reasons[0]).toContain('did not answer its handshake within 300 ms (connectTimeoutMs)');
    expect(reasons[0]).toContain('raise connectTimeoutMs');
    expect(reasons[0]).toContain('install its package beforehand');
  });
});

describe.runIf(process.env.SLUICE_NETWORK === '1')(
  'a cold `npx -y` upstream (SLUICE_NETWORK=1: reaches the registry)',
  () => {
    it('is fetched into an empty npm cache, started and imported by sluice serve with no setting', async () => {
      // An empty cache and an empty working folder: npx finds the package nowhere and must download it.
      const cache = mkdtempSync(join(tmpdir(), 'sluice-npm-cache-'));
      const cwd = mkdtempSync(join(tmpdir(), 'sluice-npx-'));
      folders.push(cache, cwd);
      const served = await serveOne({
        type: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-memory@2026.8.31'],
        cwd,
        env: { npm_config_cache: cache, npm_config_update_notifier: 'false' },
      });
      expect(readdirSync(cache).length).toBeGreaterThan(0);
      const client = await httpClient(served.url);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('slow_read_graph');
      const graph = await call(client, 'slow_read_graph');
      expect(graph.isError).toBeFalsy();
      await client.close();
    }, 120_000);
  },
);
