import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { interpolateEnv, parseGatewayConfig } from '@sluice/gateway';
import { starterConfig } from '../src/init-command.js';
import { CLI_SOURCE, FIXTURE_UPSTREAM, REPO_ROOT, serve } from './helpers.js';

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
    // Sessions and console logins live in Redis: round-robin on every request, nothing pinned to a replica.
    expect(cfg).toContain('balance roundrobin');
    expect(cfg).not.toMatch(/^\s*stick/m);
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

/** The unit's directives (`Key=value` lines of every section) and its `install -m MODE ... DEST` instructions. */
function unitFile() {
  const text = readFileSync(deploy('sluice.service'), 'utf8');
  const directives = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (match) directives.set(match[1]!, [...(directives.get(match[1]!) ?? []), match[2]!]);
  }
  const modes = new Map<string, number>();
  for (const match of text.matchAll(/install -D -m (0[0-7]{3}) \S+ (\/\S+)/g))
    modes.set(match[2]!, Number.parseInt(match[1]!, 8));
  return { directives, modes };
}

// A uid in systemd's DynamicUser range that owns nothing on this machine.
const DYNAMIC_UID = 61_234;

/**
 * Lets other users pass through every folder above `path` that they could not
 * (a checkout inside a `mktemp -d` folder, mode 0700), so that the dynamic
 * user can read the sources it runs; returns what puts the modes back.
 */
function traversable(path: string): () => void {
  const changed: [string, number][] = [];
  for (let dir = path; ; dir = dirname(dir)) {
    const mode = statSync(dir).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      chmodSync(dir, mode | 0o001);
      changed.push([dir, mode]);
    }
    if (dirname(dir) === dir) break;
  }
  return () => {
    for (const [dir, mode] of changed) chmodSync(dir, mode);
  };
}

describe('the systemd unit under a dynamic user', () => {
  it.skipIf(process.getuid?.() !== 0)(
    "starts its ExecStart as an unprivileged uid, with the config and env files installed as the unit's header says",
    async () => {
      const { directives, modes } = unitFile();
      const root = mkdtempSync(join(tmpdir(), 'sluice-unit-'));
      chmodSync(root, 0o755);
      const etc = join(root, 'etc');
      const state = join(root, 'state');
      mkdirSync(etc, { mode: 0o755 });
      mkdirSync(state, { mode: 0o700 });
      chownSync(state, DYNAMIC_UID, DYNAMIC_UID); // StateDirectory= belongs to the service's user.
      const local = (path: string) => path.replace('/etc/sluice', etc).replace('/var/lib/sluice', state);
      const restore = traversable(REPO_ROOT);
      try {
        const configPath = '/etc/sluice/sluice.config.json';
        const envPath = '/etc/sluice/sluice.env';
        expect(modes.get(configPath), 'the header says how to install the config').toBeDefined();
        expect(modes.get(envPath), 'the header says how to install the env file').toBeDefined();
        const config = {
          listen: {
            http: {
              host: '127.0.0.1',
              port: 0,
              auth: { type: 'apiKeys', keys: [{ name: 'a', key: '${SLUICE_AGENT_KEY}' }] },
            },
          },
          upstreams: [
            { name: 'local', connection: { type: 'stdio', command: process.execPath, args: [FIXTURE_UPSTREAM] } },
          ],
        };
        // Installed by root, with the modes the header prescribes.
        writeFileSync(local(configPath), JSON.stringify(config));
        chmodSync(local(configPath), modes.get(configPath)!);
        writeFileSync(local(envPath), `SLUICE_AGENT_KEY=${'k'.repeat(24)}\n`);
        chmodSync(local(envPath), modes.get(envPath)!);

        // systemd reads EnvironmentFile= as root, then runs ExecStart as the dynamic user.
        const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: state };
        for (const assignment of directives.get('Environment') ?? []) {
          const [key, ...value] = assignment.split('=');
          env[key!] = local(value.join('='));
        }
        for (const line of readFileSync(local(envPath), 'utf8').trim().split('\n')) {
          const [key, ...value] = line.split('=');
          env[key!] = value.join('=');
        }
        const [execStart] = directives.get('ExecStart') ?? [];
        expect(execStart).toMatch(/^\/usr\/bin\/env sluice serve /);
        const args = execStart!
          .replace(/^\/usr\/bin\/env sluice /, '')
          .split(' ')
          .map(local);
        // The sources stand in for the installed `sluice`; tsx is named by path, as cwd is the state folder.
        const tsx = pathToFileURL(join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
        const child = spawn(process.execPath, ['--conditions=sluice:source', '--import', tsx, CLI_SOURCE, ...args], {
          cwd: local(directives.get('WorkingDirectory')![0]!),
          env,
          uid: DYNAMIC_UID,
          gid: DYNAMIC_UID,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        const ready = new Promise<boolean>((resolve) => {
          child.stderr.on('data', (chunk: Buffer) => {
            stderr += chunk.toString();
            if (stderr.includes('"event":"gateway.ready"')) resolve(true);
          });
          child.once('exit', () => resolve(false));
        });
        const started = await ready;
        child.kill('SIGTERM');
        expect(started, stderr).toBe(true);
        // The env file holds the keys: nobody but root reads it.
        expect(modes.get(envPath)! & 0o077).toBe(0);
      } finally {
        restore();
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
});

/** The runtime stage's instructions of the Dockerfile, continuation lines joined, as `[op, args]`. */
function runtimeStage(): [string, string][] {
  const text = readFileSync(deploy('Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const lines = text.split('\n').filter((line) => /^[A-Z]+ /.test(line));
  const last = lines.map((line) => line.startsWith('FROM ')).lastIndexOf(true);
  return lines.slice(last).map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]);
}

// The address a client outside a container reaches it at, here the machine's own: loopback is not it.
const OUTSIDE = Object.values(networkInterfaces())
  .flat()
  .find((address) => address !== undefined && !address.internal && address.family === 'IPv4')?.address;

describe('the image, without Docker', () => {
  it("runs its HEALTHCHECK from the gateway's folder, binds 0.0.0.0 by SLUICE_HOST, and gives npx a cache of its own", () => {
    const stage = runtimeStage();
    const env = new Map(stage.filter(([op]) => op === 'ENV').map(([, args]) => args.split('=') as [string, string]));
    expect(env.get('SLUICE_HOST')).toBe('0.0.0.0');
    const cache = env.get('npm_config_cache')!;
    // A stdio upstream inherits a minimal environment (HOME, not npm_config_cache): its npx looks in $HOME/.npm
    // of the node user, so the cache (and compose's volume) must be there.
    expect(Object.keys(getDefaultEnvironment())).not.toContain('npm_config_cache');
    expect(cache).toBe('/home/node/.npm');
    // Created and owned by the user the gateway runs as, before USER switches to it.
    const run = stage.find(([op, args]) => op === 'RUN' && args.includes(cache))?.[1] ?? '';
    expect(run).toMatch(new RegExp(`chown node:node [^&]*${cache}`));
    expect(stage.find(([op]) => op === 'HEALTHCHECK')?.[1]).toMatch(/CMD \["node", "\/app\/healthcheck\.mjs"\]$/);
    const build = readFileSync(deploy('Dockerfile'), 'utf8');
    expect(build).toContain('cp deploy/healthcheck.mjs /out/healthcheck.mjs');
  });

  it('mounts a volume on the npm cache under the read-only root of the compose replicas', () => {
    const compose = readFileSync(deploy('compose.yaml'), 'utf8');
    expect(compose).toMatch(/^ {2}read_only: true$/m);
    const cache = /^ENV npm_config_cache=(\S+)$/m.exec(readFileSync(deploy('Dockerfile'), 'utf8'))?.[1];
    expect(compose).toContain(`- npm-cache:${cache}`);
    expect(compose).toMatch(/^volumes:\n(?: {2}\S+:\n)* {2}npm-cache:$/m);
  });

  it('has `sluice init` bind SLUICE_HOST, so a starter config listens on 0.0.0.0 in the image and on loopback elsewhere', () => {
    const raw = starterConfig('sluice.config.schema.json');
    const env = { SLUICE_API_KEY: 'k'.repeat(24) };
    expect(parseGatewayConfig(interpolateEnv(raw, env)).listen.http?.host).toBe('127.0.0.1');
    expect(parseGatewayConfig(interpolateEnv(raw, { ...env, SLUICE_HOST: '0.0.0.0' })).listen.http?.host).toBe(
      '0.0.0.0',
    );
  });

  it.skipIf(OUTSIDE === undefined)(
    'reports a gateway bound to 127.0.0.1 unhealthy (unreachable through -p), and one bound beyond loopback healthy',
    async () => {
      const healthcheck = (port: string) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, [deploy('healthcheck.mjs')], {
            env: { ...process.env, SLUICE_PORT: port },
            stdio: 'ignore',
          });
          child.once('exit', resolve);
        });
      for (const [host, expected] of [
        ['127.0.0.1', 1],
        [OUTSIDE!, 0],
      ] as const) {
        const auth = { type: 'apiKeys', keys: [{ name: 'agent', key: 'k'.repeat(24) }] };
        const served = await serve({ listen: { http: { host, port: 0, auth } }, upstreams: [] });
        try {
          expect(await healthcheck(served.url.port)).toBe(expected);
        } finally {
          await served.stop();
        }
      }
    },
    60_000,
  );
});
