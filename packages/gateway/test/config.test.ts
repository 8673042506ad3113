import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { join, resolve } from 'node:path';
import { SluiceError } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { GatewayErrorCode, createGateway, interpolateEnv, loadConfigFile, parseGatewayConfig } from '@sluice/gateway';
import { tempConfig } from './helpers.js';

/** The message of what `fn` throws, checking it is a SluiceError with `code`. */
function failure(fn: () => unknown, code: string): string {
  try {
    fn();
  } catch (error) {
    expect(SluiceError.is(error) && error.code).toBe(code);
    return (error as Error).message;
  }
  throw new Error('expected a failure');
}

const stdio = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  connection: { type: 'stdio', command: 'node', args: ['up.mjs'], ...extra },
});

describe('the gateway config', () => {
  it('fills in defaults: HTTP on 127.0.0.1:3000/mcp, memory store, metrics at /metrics, tracing on, no open bind beyond loopback', () => {
    const config = parseGatewayConfig({});
    expect(config.listen).toEqual({
      http: { host: '127.0.0.1', port: 3000, path: '/mcp', allowUnauthenticated: false },
      stdio: false,
    });
    expect(config).toMatchObject({
      store: 'memory',
      logLevel: 'info',
      upstreams: [],
      plugins: {},
      telemetry: { tracing: true, metricsPath: '/metrics' },
    });
  });

  it.each([
    [
      { upstreams: [{ name: 'a', connection: { type: 'http', url: 'not a url' } }] },
      'upstreams.0.connection.url: must be an http or https URL',
    ],
    [{ upstreams: [{ name: 'a', connection: { type: 'ftp' } }] }, 'upstreams.0.connection.type: '],
    [{ upstreams: [stdio('a'), stdio('a')] }, 'upstreams.1.name: "a" is already the name of upstreams.0'],
    [
      { upstreams: [stdio('local')], plugins: { risk: {} } },
      'upstreams.0.name: the risk plugin gives "local" to the server\'s own tools (its ledger and holds): rename the upstream',
    ],
    [{ plugins: { loopGaurd: {} } }, 'plugins.loopGaurd: unknown field'],
    [{ plugins: { concurrency: { default: { maxActive: 0 } } } }, 'plugins.concurrency.default.maxActive: Too small'],
    [{ plugins: { requestFilter: { mode: 'sometimes' } } }, 'plugins.requestFilter.mode: Invalid option'],
    [{ plugins: { egress: { maxPayloadBytes: 10 } } }, 'plugins.egress.maxPayloadBytes: Too small'],
    [{ plugins: { risk: { maxRisk: 'L9' } } }, 'plugins.risk.maxRisk: Invalid option'],
    [{ listen: { http: { port: 'eighty' } } }, 'listen.http.port: must be a port number'],
    [{ listen: { http: { port: 70_000 } } }, 'listen.http.port: Too big'],
    [{ listen: {} }, 'listen: listen on http, on stdio, or on both'],
    [{ store: 'disk' }, 'store: expected "memory" or object'],
    [{ store: { redis: 'http://cache:6379' } }, 'store.redis: use a redis:// or rediss:// URL'],
    [{ telemetry: { metricsPath: '/mcp' } }, 'telemetry.metricsPath: must differ from listen.http.path'],
  ])('names the path of the bad field: %j', (input, expected) => {
    expect(failure(() => parseGatewayConfig(input), GatewayErrorCode.CONFIG_INVALID)).toContain(`  ${expected}`);
  });

  it('accepts a port as a numeric string, for ${VAR} references', () => {
    expect(parseGatewayConfig({ listen: { http: { port: '8080' } } }).listen.http?.port).toBe(8080);
  });

  it('resolves a stdio cwd, a ./command and the risk ledger against the config folder; bare commands stay on PATH', () => {
    const base = resolve('/srv/gateway');
    const config = parseGatewayConfig(
      {
        upstreams: [stdio('a'), { name: 'b', connection: { type: 'stdio', command: './bin/up', cwd: 'work' } }],
        plugins: { risk: { ledger: { path: 'state/ledger.json' } } },
      },
      { baseDir: base },
    );
    expect(config.upstreams[0]?.connection).toMatchObject({ command: 'node', cwd: base, args: ['up.mjs'] });
    expect(config.upstreams[1]?.connection).toMatchObject({ command: join(base, 'bin/up'), cwd: join(base, 'work') });
    expect(config.plugins.risk?.ledger.path).toBe(join(base, 'state/ledger.json'));
  });

  it('turns any JSON whatsoever into a config or a CONFIG_INVALID error, never another failure', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          parseGatewayConfig(value);
        } catch (error) {
          expect(SluiceError.is(error) && error.code).toBe(GatewayErrorCode.CONFIG_INVALID);
        }
      }),
    );
  });
});

describe('environment references', () => {
  const env = { TOKEN: 's3cret-value', EMPTY: '' };

  it('replaces ${NAME} and ${NAME:-fallback} in strings, and $${ stays a literal ${', () => {
    const out = interpolateEnv(
      { a: 'Bearer ${TOKEN}', b: ['${MISSING:-x}', '${EMPTY:-y}', '$${TOKEN}'], '${TOKEN}': 1 },
      env,
    );
    expect(out).toEqual({ a: 'Bearer s3cret-value', b: ['x', 'y', '${TOKEN}'], '${TOKEN}': 1 });
  });

  it('fails on an unset variable naming it and the field, never showing the values', () => {
    const message = failure(
      () => interpolateEnv({ upstreams: [{ headers: { authorization: 'Bearer ${API_TOKEN} ${TOKEN}' } }] }, env),
      GatewayErrorCode.ENV_MISSING,
    );
    expect(message).toBe('upstreams.0.headers.authorization: environment variable API_TOKEN is not set');
  });

  it('rejects a reference that is not a variable name', () => {
    expect(failure(() => interpolateEnv({ a: '${not valid}' }, env), GatewayErrorCode.CONFIG_INVALID)).toContain(
      'a: "${not valid}" is not a variable reference',
    );
  });

  it('keeps __proto__ a plain key', () => {
    const out = interpolateEnv(JSON.parse('{"__proto__": {"polluted": "${TOKEN}"}}'), env) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: 's3cret-value' });
  });

  it('reads a file, substitutes the environment, and names the file and position when it is not JSON', async () => {
    const good = tempConfig({
      upstreams: [
        {
          name: 'a',
          connection: { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { authorization: '${TOKEN}' } },
        },
      ],
    });
    const bad = tempConfig('{\n  "name": "x",\n  oops\n}');
    try {
      const loaded = await loadConfigFile(good.file, env);
      expect(loaded.baseDir).toBe(good.dir);
      expect(loaded.config.upstreams[0]?.connection).toMatchObject({ headers: { authorization: 's3cret-value' } });
      await expect(loadConfigFile(bad.file, env)).rejects.toThrow(
        `The config file ${bad.file} is not valid JSON at line 3, column 3`,
      );
      await expect(loadConfigFile(bad.file, env)).rejects.toMatchObject({ code: GatewayErrorCode.CONFIG_NOT_JSON });
      await expect(loadConfigFile(join(good.dir, 'missing.json'), env)).rejects.toMatchObject({
        code: GatewayErrorCode.CONFIG_NOT_FOUND,
      });
    } finally {
      good.remove();
      bad.remove();
    }
  });
});

describe('plugins from the config', () => {
  const names = (input: unknown): string[] =>
    createGateway(input as never, { logger: captureLogger().logger }).server.plugins.map((p) => p.name);

  it('loads exactly the plugins the config names, each from its own options, plus the telemetry', () => {
    expect(names({ listen: { stdio: true } })).toEqual(['gateway-telemetry']);
    expect(
      names({
        listen: { stdio: true },
        plugins: { loopGuard: {}, risk: { ledger: { persist: 'memory' } }, concurrency: {}, egress: {}, chaining: {} },
      }),
    ).toEqual(['loop-guard', 'risk', 'concurrency', 'egress', 'chaining', 'gateway-telemetry']);
  });

  it('turns the request filter on by default over HTTP only, and off with false', () => {
    expect(names({})).toContain('request-filter');
    expect(names({ plugins: { requestFilter: false } })).not.toContain('request-filter');
    expect(names({ listen: { stdio: true } })).not.toContain('request-filter');
  });
});

describe('upstream secrets and the risk plugin', () => {
  it("adds every upstream header and env value to the risk plugin's secrets", async () => {
    const { withUpstreamSecrets } = await import('../src/risk-servers.js');
    const upstreams = [
      {
        name: 'http',
        connection: { type: 'http', url: 'https://a.example/mcp', headers: { authorization: 'Bearer tok-123456' } },
      },
      { name: 'child', connection: { type: 'stdio', command: 'node', env: { API_KEY: 'key-abcdef' } } },
    ] as never;
    expect(withUpstreamSecrets({ secrets: ['mine-9999'] }, upstreams).secrets).toEqual([
      'mine-9999',
      'Bearer tok-123456',
      'key-abcdef',
    ]);
  });
});
