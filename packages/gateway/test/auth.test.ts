// `sluice serve` with authentication, as a child process: keys from the
// environment, refusals at the door, metrics behind the same door or on a
// listener of their own, and no open bind beyond loopback.
import { describe, expect, it } from 'vitest';
import { call, fixtureUpstream, httpClient, runCli, tempConfig } from './helpers.js';

const KEY = 'gateway-test-key-0123456789';

describe('sluice serve with authentication', () => {
  it('lets a caller with a configured key through, refuses others, and guards /metrics', async () => {
    const config = tempConfig({
      listen: {
        http: {
          port: 0,
          auth: {
            type: 'apiKeys',
            keys: [
              { name: 'ci', key: '${SLUICE_KEY}' },
              { name: 'prometheus', key: `${KEY}-scrape`, scopes: ['sluice:metrics'] },
              { name: 'ops', key: `${KEY}-ops`, scopes: ['sluice:admin'] },
            ],
          },
        },
      },
      upstreams: [fixtureUpstream('fx')],
      admin: {},
    });
    const run = runCli(['serve', '--config', config.file], { SLUICE_KEY: KEY });
    try {
      const url = new URL((await run.event('http.listening')).url as string);
      const refused = await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(refused.status).toBe(401);
      const client = await httpClient(url, { authorization: `Bearer ${KEY}` });
      const result = await call(client, 'fx_echo', { text: 'hello' });
      expect(result.isError).toBeFalsy();
      await client.close();
      const metrics = new URL('/metrics', url);
      expect((await fetch(metrics)).status).toBe(401);
      // An MCP key alone does not read the upstreams, tools and counts: the scraper's scope or an operator's does.
      const forbidden = await fetch(metrics, { headers: { authorization: `Bearer ${KEY}` } });
      expect(forbidden.status).toBe(403);
      const refusal = await forbidden.text();
      expect(refusal).toContain('sluice:metrics');
      expect(refusal).not.toContain('fx');
      const scraped = await fetch(metrics, { headers: { authorization: `Bearer ${KEY}-scrape` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('sluice_upstream_up{upstream="fx"}');
      expect((await fetch(metrics, { headers: { authorization: `Bearer ${KEY}-ops` } })).status).toBe(200);
      // The key never reaches the logs.
      expect(run.stderr()).not.toContain(KEY);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      config.remove();
    }
  });

  it('applies per-caller tool policy from the config', async () => {
    const config = tempConfig({
      listen: {
        http: {
          port: 0,
          auth: {
            type: 'apiKeys',
            keys: [
              { name: 'reader', key: KEY, scopes: ['read'] },
              { name: 'admin', key: `${KEY}-admin`, scopes: ['read', 'admin'] },
            ],
          },
        },
      },
      upstreams: [fixtureUpstream('fx')],
      plugins: {
        authz: {
          rules: [
            { when: { scopes: ['read'] }, allow: ['fx_echo'] },
            { when: { scopes: ['admin'] }, allow: ['fx_*'] },
          ],
        },
      },
    });
    const run = runCli(['serve', '--config', config.file]);
    try {
      const url = new URL((await run.event('http.listening')).url as string);
      const reader = await httpClient(url, { authorization: `Bearer ${KEY}` });
      expect((await reader.listTools()).tools.map((t) => t.name)).toEqual(['fx_echo']);
      // Not granted: answered as a tool that does not exist (authz's default, `hidden: 'not_found'`).
      await expect(call(reader, 'fx_meta')).rejects.toMatchObject({
        code: -32602,
        message: 'Unknown tool: "fx_meta"',
        data: { code: 'UNKNOWN_TOOL' },
      });
      await reader.close();
      const admin = await httpClient(url, { authorization: `Bearer ${KEY}-admin` });
      expect((await admin.listTools()).tools.length).toBeGreaterThan(1);
      await admin.close();
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      config.remove();
    }
  });

  it('lets every verified caller scrape with telemetry.metricsScopes: []', async () => {
    const config = tempConfig({
      listen: { http: { port: 0, auth: { type: 'apiKeys', keys: [{ name: 'ci', key: KEY }] } } },
      telemetry: { metricsScopes: [] },
    });
    const run = runCli(['serve', '--config', config.file]);
    try {
      const url = new URL((await run.event('http.listening')).url as string);
      const metrics = new URL('/metrics', url);
      expect((await fetch(metrics)).status).toBe(401);
      expect((await fetch(metrics, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(200);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      config.remove();
    }
  });

  it('serves metrics on a listener of their own when told to', async () => {
    const config = tempConfig({
      listen: { http: { port: 0, auth: { type: 'apiKeys', keys: [{ name: 'ci', key: KEY }] } } },
      telemetry: { metricsListen: { port: 0 } },
    });
    const run = runCli(['serve', '--config', config.file]);
    try {
      const scrape = new URL((await run.event('gateway.metrics_listening')).url as string);
      const mcp = new URL((await run.event('http.listening')).url as string);
      expect((await fetch(scrape)).status).toBe(200);
      // Not on the MCP listener any more.
      expect((await fetch(new URL('/metrics', mcp), { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(404);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      config.remove();
    }
  });

  it('refuses to bind 0.0.0.0 without authentication, saying how to fix it', async () => {
    const config = tempConfig({ listen: { http: { host: '0.0.0.0', port: 0 } } });
    const run = runCli(['serve', '--config', config.file]);
    try {
      expect(await run.exited).not.toBe(0);
      expect(run.stderr()).toMatch(/without authentication/);
      expect(run.stderr()).toMatch(/allowUnauthenticated/);
    } finally {
      config.remove();
    }
  });
});
