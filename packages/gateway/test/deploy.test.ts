import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { interpolateEnv, parseGatewayConfig } from '@sluice/gateway';

const deploy = (file: string) => fileURLToPath(new URL(`../../../deploy/${file}`, import.meta.url));
const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((path) => existsSync(path));
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze';

describe('the deployment files', () => {
  it('ship a gateway config that is valid once its variables are set, with Redis, the console and auth', () => {
    const raw = JSON.parse(readFileSync(deploy('sluice.config.json'), 'utf8')) as unknown;
    const env = {
      SLUICE_AGENT_KEY: 'a'.repeat(24),
      SLUICE_ADMIN_KEY: 'b'.repeat(24),
      SLUICE_APPROVAL_KEY: 'c'.repeat(32),
      UPSTREAM_URL: 'https://tools.example.com/mcp',
    };
    const config = parseGatewayConfig(interpolateEnv(raw, env));
    expect(config.store).toMatchObject({ redis: 'redis://redis:6379' });
    expect(config.listen.http).toMatchObject({ host: '0.0.0.0', port: 3000, auth: { type: 'apiKeys' } });
    expect(config.admin).toEqual({
      console: true,
      scopes: ['admin'],
      session: {
        ttlMs: 28_800_000,
        idleMs: 1_800_000,
        max: 100,
        secureCookie: false,
        maxFailures: 5,
        failureWindowMs: 60_000,
      },
    });
    expect(config.health.enabled).toBe(true);
    // Without its keys it fails to start, rather than serve an open gateway.
    expect(() => interpolateEnv(raw, {})).toThrow(/SLUICE_AGENT_KEY/);
  });

  it.skipIf(HAPROXY === undefined)('ship an HAProxy config HAProxy accepts, checking /readyz', () => {
    const out = execFileSync(HAPROXY as string, ['-c', '-f', deploy('haproxy.cfg')], {
      encoding: 'utf8',
      stdio: 'pipe',
    });
    expect(out).toContain('Configuration file is valid');
    const cfg = readFileSync(deploy('haproxy.cfg'), 'utf8');
    expect(cfg).toContain('http-check send meth GET uri /readyz');
    // A console login is kept by the replica that made it: its cookie must lead back there.
    expect(cfg).toContain('stick match req.cook(sluice_console)');
  });

  it.skipIf(!existsSync(SYSTEMD_ANALYZE))('ship a systemd unit that systemd accepts', () => {
    expect(() => execFileSync(SYSTEMD_ANALYZE, ['verify', deploy('sluice.service')], { stdio: 'pipe' })).not.toThrow();
  });

  it('build an image that runs the gateway as a user other than root, from two stages', () => {
    const dockerfile = readFileSync(deploy('Dockerfile'), 'utf8');
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    const lastStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(lastStage).toMatch(/^USER node$/m);
    expect(lastStage).not.toMatch(/pnpm install|pnpm build/);
  });
});
