// `sluice serve` with a `per_user` upstream, its grants sealed in a vault on
// a real Redis with a key from the environment: a caller is asked to connect
// (URL elicitation), a headless chromium walks the gateway's consent page and
// a real authorization server's sign-in and consent (oidc-provider), the call
// then succeeds as the caller's own upstream account. Redis holds no token,
// a gateway with the wrong key says so, `sluice credentials` lists and
// revokes grants through the admin API, and the console's Credentials page
// lists and revokes them with no token in sight (nor in /metrics).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import puppeteer from 'puppeteer-core';
import type { Browser } from 'puppeteer-core';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import { captureLogger, urlElicitationOf } from '@sluice/testing';
import { AdminClient, GatewayErrorCode, createGateway } from '@sluice/gateway';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { opsAndAgentKeys, runCli, serve, tempConfig } from './helpers.js';
import type { Served } from './helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package`);

interface ConsentServer {
  readonly issuer: string;
  register(redirectUri: string): void;
  close(): Promise<void>;
}

// Core's test authorization server for per-user grants, loaded at run time: it lies outside this package's sources.
const helper = fileURLToPath(new URL('../../core/test/helpers/consent-authorization-server.ts', import.meta.url));
const { CONSENT_GATEWAY, startConsentServer } = (await import(helper)) as {
  CONSENT_GATEWAY: { id: string; secret: string };
  startConsentServer: () => Promise<ConsentServer>;
};

const OPS_KEY = 'ops-key-0123456789abcdef';
const ALICE_KEY = 'alice-key-0123456789abcdef';

let as: ConsentServer;
let upstream: SluiceServer;
let listener: HttpListener;
let redis: RedisProcess;
let browser: Browser;
/** Every bearer token the upstream accepted. */
const seen: string[] = [];

beforeAll(async () => {
  as = await startConsentServer();
  redis = await startRedis();
  upstream = createServer({ name: 'saas', version: '1.0.0' });
  upstream.tool({
    name: 'whoami',
    handler: (_args, ctx) => ({ content: [{ type: 'text', text: String(ctx.auth?.subject) }] }),
  });
  listener = await upstream.listen({
    auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 },
  });
  listener.server.prependListener('request', (req) => {
    const authorization = req.headers.authorization;
    if (authorization?.startsWith('Bearer ')) seen.push(authorization.slice(7));
  });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}, 120_000);
afterAll(async () => {
  await browser.close().catch(() => {});
  await upstream.close();
  await redis.stop();
  await as.close();
});

function config(): Record<string, unknown> {
  const keys = opsAndAgentKeys(OPS_KEY, 'agent-key-0123456789abcdef');
  return {
    listen: { http: { port: 0, auth: { ...keys, keys: [...keys.keys, { name: 'alice', key: ALICE_KEY }] } } },
    admin: { scopes: ['admin'] },
    store: { redis: redis.url },
    credentialVault: { keys: [{ id: 'k1', key: '${SLUICE_VAULT_KEY}' }] },
    upstreams: [
      {
        name: 'saas',
        connection: { type: 'http', url: listener.url.href },
        auth: {
          type: 'per_user',
          clientId: CONSENT_GATEWAY.id,
          clientSecret: '${SAAS_CLIENT_SECRET}',
          issuer: as.issuer,
          scope: 'read offline_access',
        },
      },
    ],
  };
}

async function caller(url: URL): Promise<Client> {
  const client = new Client({ name: 'alice', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${ALICE_KEY}` } } }),
  );
  return client;
}

/** The consent link of the URL elicitation the gateway answers with. */
async function askedToConnect(client: Client): Promise<string> {
  return (await urlElicitationOf(client.callTool({ name: 'whoami', arguments: {} }))).url;
}

async function consent(url: string, login: string): Promise<string> {
  const context = await browser.createBrowserContext();
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('#continue')]);
    await page.type('input[name="login"]', login);
    await page.type('input[name="password"]', 'any password');
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type="submit"]')]);
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type="submit"]')]);
    return await page.content();
  } finally {
    await context.close();
  }
}

function redisDump(): string {
  const port = new URL(redis.url).port;
  const keys = spawnSync('redis-cli', ['-p', port, '--scan'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return keys
    .map((key) => {
      const type = spawnSync('redis-cli', ['-p', port, 'type', key], { encoding: 'utf8' }).stdout.trim();
      const read = type === 'hash' ? ['hgetall', key] : type === 'string' ? ['get', key] : ['dump', key];
      return `${key} ${spawnSync('redis-cli', ['-p', port, ...read], { encoding: 'utf8' }).stdout}`;
    })
    .join('\n');
}

async function cli(args: readonly string[], served: Served): Promise<string> {
  const file = tempConfig(config());
  try {
    const run = runCli(['credentials', ...args, '--config', file.file, '--url', served.url.origin, '--json'], {
      SLUICE_ADMIN_KEY: OPS_KEY,
      SLUICE_VAULT_KEY: randomBytes(32).toString('base64'),
      SAAS_CLIENT_SECRET: 'unused-by-the-command',
    });
    expect(await run.exited, run.stderr()).toBe(0);
    return run.stdout();
  } finally {
    file.remove();
  }
}

describe('sluice serve with a per_user upstream and a vault on Redis', () => {
  it('asks, connects through the consent page, seals the grant, refuses a wrong key, and revokes', async () => {
    const vaultKey = randomBytes(32).toString('base64');
    const env = { SLUICE_VAULT_KEY: vaultKey, SAAS_CLIENT_SECRET: CONSENT_GATEWAY.secret };
    const served = await serve(config(), env);
    try {
      as.register(new URL('/oauth/upstream/callback', served.url).href);
      const alice = await caller(served.url);
      // A caller who keeps calling without connecting holds at most eight live links at a time (each call used to
      // write a ticket of its own to the store, for consentTtlSec); a newer link spends the oldest.
      const flood: string[] = [];
      for (let i = 0; i < 12; i++) flood.push(await askedToConnect(alice));
      expect(new Set(flood).size).toBe(12);
      expect(redisDump().match(/sluice:upstream-consent:ticket:/g)).toHaveLength(8);
      const spent = await fetch(flood[0] ?? '');
      expect(spent.status).toBe(400);
      expect(await spent.text()).toContain('This link is no longer valid');
      const link = await askedToConnect(alice);
      expect(new URL(link).origin).toBe(served.url.origin);
      expect(await consent(link, 'alice-at-saas')).toContain('<h1>Connected</h1>');
      const result = await alice.callTool({ name: 'whoami', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect((result.content as { text: string }[])[0]?.text).toBe('alice-at-saas');

      // Redis holds the grant sealed: no token the upstream accepted, in any key.
      const dump = redisDump();
      expect(dump).toMatch(/sluice:vault:\S+ v1\.k1\./);
      expect(seen.length).toBeGreaterThan(0);
      for (const token of seen) expect(dump).not.toContain(token);
      expect(served.run.stderr()).not.toContain(seen.at(-1) ?? '-');

      // The grant is listed by slot, never by value.
      const listed = JSON.parse(await cli(['list'], served)) as { credentials: unknown[] };
      expect(listed.credentials).toEqual([{ upstream: 'saas', subject: 'alice' }]);

      // A replica with the wrong key cannot open it, and says so.
      const wrong = await serve(config(), { ...env, SLUICE_VAULT_KEY: randomBytes(32).toString('base64') });
      try {
        const elsewhere = await caller(wrong.url);
        const refused = await elsewhere.callTool({ name: 'whoami', arguments: {} });
        expect(refused.isError).toBe(true);
        expect(JSON.stringify(refused.content)).toMatch(
          /credential vault cannot open this caller's grant for upstream \\"saas\\"/,
        );
        await elsewhere.close();
      } finally {
        await wrong.stop();
      }

      // Revoked through the CLI: the next call asks to connect again.
      expect(JSON.parse(await cli(['revoke', '--subject', 'alice'], served))).toEqual({ revoked: 1 });
      const again = await askedToConnect(alice);
      expect(again).not.toBe(link);

      // Connected anew, then revoked from the console's Credentials page, which shows the grant and no token.
      expect(await consent(again, 'alice-at-saas')).toContain('<h1>Connected</h1>');
      expect((await alice.callTool({ name: 'whoami', arguments: {} })).isError).toBeFalsy();
      const metrics = await fetch(new URL('/metrics', served.url), { headers: { authorization: `Bearer ${OPS_KEY}` } });
      expect(metrics.status).toBe(200);
      const exposition = await metrics.text();
      for (const token of seen) expect(exposition).not.toContain(token);
      const operator = await browser.newPage();
      try {
        await operator.setExtraHTTPHeaders({ authorization: `Bearer ${OPS_KEY}` });
        await operator.goto(new URL('/console/credentials', served.url).href, { waitUntil: 'domcontentloaded' });
        const listing = await operator.content();
        expect(listing).toContain('data-credential="saas/alice"');
        for (const token of seen) expect(listing).not.toContain(token);
        await Promise.all([
          operator.waitForNavigation({ waitUntil: 'domcontentloaded' }),
          operator.click('tr[data-credential="saas/alice"] form:first-of-type button.revoke'),
        ]);
        expect(await operator.content()).toContain('No caller has connected an upstream account.');
      } finally {
        await operator.close();
      }
      expect(await askedToConnect(alice)).not.toBe(again);
      await alice.close();
    } finally {
      await served.stop();
    }
  }, 180_000);

  it('answers 409 NO_VAULT for credentials when the config has no vault, and refuses per_user without one', async () => {
    const bare = createGateway({ listen: { http: { port: 0 } }, admin: {} }, { logger: captureLogger().logger });
    try {
      const { http } = await bare.start();
      const answer = await fetch(new URL('/admin/v1/credentials', http?.url));
      expect(answer.status).toBe(409);
      expect(await answer.json()).toEqual({
        error: 'The gateway has no credential vault: configure credentialVault (per_user upstreams need it)',
      });
      const client = new AdminClient(http?.url as URL, undefined);
      await expect(client.revokeCredentials({ subject: 'alice' })).rejects.toMatchObject({
        code: GatewayErrorCode.NO_VAULT,
      });
      expect(await (await fetch(new URL('/console/credentials', http?.url))).text()).toContain('No credential vault');
    } finally {
      await bare.close();
    }
    const withoutVault = { ...config(), credentialVault: undefined };
    expect(() => createGateway(withoutVault, { logger: captureLogger().logger })).toThrow(
      /per_user keeps each caller's grant in the credential vault: set credentialVault/,
    );
  });
});
