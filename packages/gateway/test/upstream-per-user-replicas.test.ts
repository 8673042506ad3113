// A `per_user` upstream on gateway replicas sharing one real redis-server, behind one public address (a loopback
// front that sends each consent step to the replica the test names, as a load balancer would): a caller asked to
// connect on one replica opens the consent page on a second, the authorization server (oidc-provider) sends the
// browser (a headless chromium) back to a third, and from then on every replica calls the upstream as that
// caller's own account without asking again. Two replicas meeting the same expired grant at once refresh it once;
// a grant revoked through one replica's admin API is never sent again by another; and no replica ever lends one
// caller's grant to another.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Browser } from 'puppeteer-core';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import type { HttpListener } from '@sluice/core';
import { captureLogger, textOf, urlElicitationOf } from '@sluice/testing';
import type { UrlElicitation } from '@sluice/testing';
import { AdminClient } from '@sluice/gateway';
import type { GatewayConfigInput } from '@sluice/gateway';
import { eventually, startReplicas } from './helpers.js';
import type { InProcessReplica } from './helpers.js';
import { startRedis } from './redis.js';
import type { RedisProcess } from './redis.js';

interface ConsentServer {
  readonly issuer: string;
  readonly grants: string[];
  register(redirectUri: string): void;
  close(): Promise<void>;
}

// Core's test authorization server and browser walk for per-user grants, loaded at run time: they lie outside
// this package's sources.
const helpers = (file: string) => fileURLToPath(new URL(`../../core/test/helpers/${file}`, import.meta.url));
const { CONSENT_GATEWAY, startConsentServer } = (await import(helpers('consent-authorization-server.ts'))) as {
  CONSENT_GATEWAY: { id: string; secret: string };
  startConsentServer: (options?: { accessTokenTtlSec?: number }) => Promise<ConsentServer>;
};
const { consentInBrowser, launchChromium } = (await import(helpers('consent-browser.ts'))) as {
  consentInBrowser: (browser: Browser, url: string, login: string) => Promise<string>;
  launchChromium: () => Promise<Browser>;
};

const OPS_KEY = 'per-user-replicas-ops-key-0123';
const KEYS = {
  alice: 'per-user-replicas-alice-0123456',
  bob: 'per-user-replicas-bob-012345678',
  carol: 'per-user-replicas-carol-0123456',
  dave: 'per-user-replicas-dave-01234567',
} as const;
type Caller = keyof typeof KEYS;
const CONNECT_PATH = '/oauth/upstream/connect';
const CALLBACK_PATH = '/oauth/upstream/callback';
/** The connect question's key in a 2026-07-28 input-required round. */
const CONNECT_KEY = 'dev.sluice/connect';

let redis: RedisProcess;
let browser: Browser;
const open: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  redis = await startRedis();
  browser = await launchChromium();
}, 120_000);

afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

afterAll(async () => {
  await browser.close().catch(() => {});
  await redis.stop();
});

/** Closes an HTTP server of the test's own. */
async function stop(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

async function listen(server: http.Server): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

/** Forwards `req` (with its body already read) to `target`, and its answer back. */
function forward(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse, target: URL): void {
  const out = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => res.destroy());
  out.end(body);
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The fleet's public address for browsers: each consent step goes to the replica `route` names for its path. */
interface PublicFront {
  readonly url: URL;
  readonly route: Map<string, URL>;
  /** Which replica (host) served each consent step, in order. */
  readonly served: Array<{ path: string; host: string }>;
}

async function publicFront(): Promise<PublicFront> {
  const route = new Map<string, URL>();
  const served: PublicFront['served'] = [];
  const server = http.createServer((req, res) => {
    const { pathname, search } = new URL(req.url ?? '/', 'http://front.invalid');
    const replica = route.get(pathname);
    if (replica === undefined) {
      res.writeHead(404).end();
      return;
    }
    served.push({ path: pathname, host: replica.host });
    void readBody(req).then((body) => forward(req, body, res, new URL(`${pathname}${search}`, replica)));
  });
  const url = await listen(server);
  open.push(() => stop(server));
  return { url, route, served };
}

/**
 * The authorization server's token endpoint behind a gate: while `holding`, refresh-token requests wait there
 * (everything else passes) until `release()`.
 */
interface TokenGate {
  readonly url: URL;
  holding: boolean;
  readonly held: number;
  /** Refresh-token requests that reached the gate, held or not. */
  readonly refreshes: number;
  release(): void;
}

async function tokenGate(target: URL): Promise<TokenGate> {
  const held: Array<() => void> = [];
  let refreshes = 0;
  const server = http.createServer((req, res) => {
    void readBody(req).then((body) => {
      const send = () => forward(req, body, res, target);
      const refresh = new URLSearchParams(body.toString()).get('grant_type') === 'refresh_token';
      if (refresh) refreshes++;
      if (refresh && gate.holding) held.push(send);
      else send();
    });
  });
  const url = new URL(target.pathname, await listen(server));
  open.push(() => stop(server));
  const gate: TokenGate = {
    url,
    holding: false,
    get held() {
      return held.length;
    },
    get refreshes() {
      return refreshes;
    },
    release() {
      gate.holding = false;
      for (const send of held.splice(0)) send();
    },
  };
  return gate;
}

/** The subject and expiry a JWT names (the upstream verifies it; the test only reads it). */
function claimsOf(token: string): { sub?: string; exp?: number } {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sub?: string; exp?: number };
}

type Replica = InProcessReplica;

interface World {
  readonly as: ConsentServer;
  readonly front: PublicFront;
  readonly replicas: Replica[];
  /** Every bearer token the upstream was sent, in order. */
  readonly tokens: string[];
  readonly gate?: TokenGate;
  readonly prefix: string;
}

/**
 * An authorization server, an upstream that verifies its tokens, the public front, and `count` replicas of one
 * config on one key prefix of the shared Redis. `gated`: the token endpoint is reached through a `TokenGate`.
 */
async function world(count: number, options: { accessTokenTtlSec?: number; gated?: boolean } = {}): Promise<World> {
  const as = await startConsentServer(
    options.accessTokenTtlSec === undefined ? {} : { accessTokenTtlSec: options.accessTokenTtlSec },
  );
  open.push(() => as.close());
  const upstream = createServer({ name: 'saas', version: '1.0.0', logger: captureLogger().logger });
  upstream.tool({
    name: 'whoami',
    handler: (_args, ctx) => ({ content: [{ type: 'text', text: String(ctx.auth?.subject) }] }),
  });
  const listener: HttpListener = await upstream.listen({
    auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 },
  });
  open.push(() => upstream.close());
  const tokens: string[] = [];
  listener.server.prependListener('request', (req: http.IncomingMessage) => {
    const authorization = req.headers.authorization;
    if (authorization?.startsWith('Bearer ')) tokens.push(authorization.slice(7));
  });
  const front = await publicFront();
  const callback = new URL(CALLBACK_PATH, front.url).href;
  as.register(callback);
  let gate: TokenGate | undefined;
  let endpoints = {};
  if (options.gated === true) {
    const metadata = (await (await fetch(new URL('/.well-known/openid-configuration', as.issuer))).json()) as {
      authorization_endpoint: string;
      token_endpoint: string;
    };
    gate = await tokenGate(new URL(metadata.token_endpoint));
    endpoints = {
      authorizationEndpoint: metadata.authorization_endpoint,
      tokenEndpoint: gate.url.href,
      resource: listener.url.href,
    };
  }
  const prefix = `per-user-replicas-${randomBytes(4).toString('hex')}:`;
  const keys = [
    { name: 'ops', key: OPS_KEY, scopes: ['admin'] },
    ...Object.entries(KEYS).map(([name, key]) => ({ name, key })),
  ];
  const config: GatewayConfigInput = {
    listen: { http: { port: 0, auth: { type: 'apiKeys', keys } } },
    telemetry: { metricsPath: false },
    admin: { scopes: ['admin'] },
    store: { redis: redis.url, keyPrefix: prefix },
    credentialVault: { keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }] },
    upstreams: [
      {
        name: 'saas',
        connection: { type: 'http', url: listener.url.href },
        auth: {
          type: 'per_user',
          clientId: CONSENT_GATEWAY.id,
          clientSecret: CONSENT_GATEWAY.secret,
          issuer: as.issuer,
          scope: 'read offline_access',
          // Behind one public address, every replica sends browsers back to it.
          redirectUri: callback,
          ...endpoints,
        },
      },
    ],
  };
  const replicas = await startReplicas(config, count, (close) => open.push(close));
  return { as, front, replicas, tokens, prefix, ...(gate === undefined ? {} : { gate }) };
}

async function caller(replica: Replica, who: Caller): Promise<Client> {
  const client = new Client({ name: who, version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  await client.connect(
    new StreamableHTTPClientTransport(replica.url, {
      requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } },
    }),
  );
  open.push(() => client.close());
  return client;
}

/** A 2026-07-28 caller, answering input-required rounds itself (so that a retry can go to another replica). */
async function modernCaller(replica: Replica, who: Caller): Promise<Client> {
  const client = new Client(
    { name: who, version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { url: {} } },
      inputRequired: { autoFulfill: false },
    },
  );
  await client.connect(
    new StreamableHTTPClientTransport(replica.url, {
      requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } },
    }),
  );
  open.push(() => client.close());
  return client;
}

/** A 2026-07-28 `whoami`: its input-required round, or its result; `answer` answers the connect question. */
async function modernWhoami(client: Client, answer?: 'accept' | 'decline'): Promise<Record<string, unknown>> {
  const inputResponses = answer === undefined ? {} : { inputResponses: { [CONNECT_KEY]: { action: answer } } };
  return await client.callTool(
    { name: 'whoami', arguments: {}, ...inputResponses },
    {
      allowInputRequired: true,
    },
  );
}

/** Calls `whoami` expecting to be asked to connect: the elicitation's link and id. */
function askedToConnect(client: Client): Promise<UrlElicitation> {
  return urlElicitationOf(client.callTool({ name: 'whoami', arguments: {} }));
}

/** Whom the upstream saw the call as. */
async function whoami(client: Client): Promise<string> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  expect(result.isError, textOf(result)).toBeFalsy();
  return textOf(result);
}

/** A person follows `link` through the public front: its consent page on `page`, its callback on `callback`. */
async function connect(w: World, link: string, login: string, page: Replica, callback: Replica): Promise<void> {
  expect(new URL(link).origin).toBe(w.front.url.origin);
  w.front.route.set(CONNECT_PATH, page.url);
  w.front.route.set(CALLBACK_PATH, callback.url);
  const from = w.front.served.length;
  expect(await consentInBrowser(browser, link, login)).toContain('<h1>Connected</h1>');
  expect(w.front.served.slice(from)).toEqual([
    { path: CONNECT_PATH, host: page.url.host },
    { path: CALLBACK_PATH, host: callback.url.host },
  ]);
}

describe('a per_user upstream on gateway replicas sharing Redis', () => {
  it('asked on A, connected through B and C: every replica then calls as the caller, and A tells its client', async () => {
    const w = await world(3);
    const [a, b, c] = w.replicas as [Replica, Replica, Replica];
    const onA = await caller(a, 'alice');
    const completed: string[] = [];
    onA.setNotificationHandler('notifications/elicitation/complete', (n) => {
      completed.push(n.params.elicitationId);
    });
    const asked = await askedToConnect(onA);
    await connect(w, asked.url, 'alice-at-saas', b, c);
    // C took the callback and sealed the grant; A, whose client was asked, tells it.
    expect(c.logs.events('upstream.connected')).toMatchObject([{ upstream: 'saas', subject: 'alice' }]);
    await eventually(() => completed.length > 0, 'the client on A to hear the consent completed');
    expect(completed).toEqual([asked.elicitationId]);

    const onC = await caller(c, 'alice');
    expect(await whoami(onC)).toBe('alice-at-saas');
    expect(await whoami(onA)).toBe('alice-at-saas');
    expect(await whoami(await caller(b, 'alice'))).toBe('alice-at-saas');
    // One sign-in for the fleet: nothing asked again, no further grant.
    expect(w.as.grants.filter((g) => g === 'authorization_code')).toHaveLength(1);
    // The link was spent: opening it again, on any replica, starts nothing.
    for (const replica of w.replicas) {
      w.front.route.set(CONNECT_PATH, replica.url);
      const again = await fetch(asked.url);
      expect(again.status).toBe(400);
      expect(await again.text()).toContain('This link is no longer valid');
    }
  }, 120_000);

  it("never lends one caller's grant to another, on any replica", async () => {
    const w = await world(3);
    const [a, b, c] = w.replicas as [Replica, Replica, Replica];
    const bob = await Promise.all([a, b, c].map((r) => caller(r, 'bob')));
    const carol = await Promise.all([a, b, c].map((r) => caller(r, 'carol')));
    await connect(w, (await askedToConnect(bob[0] as Client)).url, 'bob-at-saas', c, a);
    // Bob connected; Carol has not, and is asked on every replica, Bob's grant in the store notwithstanding.
    for (const client of carol) await askedToConnect(client);
    await connect(w, (await askedToConnect(carol[2] as Client)).url, 'carol-at-saas', b, b);
    // Both call at once on every replica: each reaches the upstream as themselves, every time.
    const calls = Array.from({ length: 24 }, (_, i) => {
      const [who, clients] = i % 2 === 0 ? (['bob-at-saas', bob] as const) : (['carol-at-saas', carol] as const);
      return whoami(clients[i % 3] as Client).then((seen) => [who, seen]);
    });
    for (const [expected, seen] of await Promise.all(calls)) expect(seen).toBe(expected);
  }, 120_000);

  it('a grant revoked through one replica is never sent again by another: the caller is asked everywhere', async () => {
    const w = await world(3);
    const [a, b, c] = w.replicas as [Replica, Replica, Replica];
    const dave = await Promise.all([a, b, c].map((r) => caller(r, 'dave')));
    const bob = await Promise.all([a, b, c].map((r) => caller(r, 'bob')));
    await connect(w, (await askedToConnect(dave[1] as Client)).url, 'dave-at-saas', a, c);
    await connect(w, (await askedToConnect(bob[2] as Client)).url, 'bob-at-saas', b, a);
    // Each replica has a connection open to the upstream with Dave's grant.
    for (const client of dave) expect(await whoami(client)).toBe('dave-at-saas');

    // Revoked through B's admin API (what `sluice credentials revoke` calls).
    expect(await new AdminClient(b.url, OPS_KEY).revokeCredentials({ subject: 'dave' })).toBe(1);
    const sent = w.tokens.length;
    for (const client of dave) await askedToConnect(client);
    expect(w.tokens.slice(sent).filter((t) => claimsOf(t).sub === 'dave-at-saas')).toEqual([]);
    // Bob's grant stays, everywhere.
    for (const client of bob) expect(await whoami(client)).toBe('bob-at-saas');

    // Revoked on C by upstream: nobody's grant is left, on any replica.
    const listed = await fetch(new URL('/admin/v1/credentials', a.url), {
      headers: { authorization: `Bearer ${OPS_KEY}` },
    });
    expect(await listed.json()).toEqual({ credentials: [{ upstream: 'saas', subject: 'bob' }] });
    const byUpstream = await fetch(new URL('/admin/v1/credentials/revoke', c.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${OPS_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ upstream: 'saas' }),
    });
    expect(await byUpstream.json()).toEqual({ revoked: 1 });
    for (const client of bob) await askedToConnect(client);
  }, 120_000);

  it('asks a 2026-07-28 caller on A with an input-required round; connected through C, its retry runs on B as it', async () => {
    const w = await world(3);
    const [a, b, c] = w.replicas as [Replica, Replica, Replica];
    const round = await modernWhoami(await modernCaller(a, 'alice'));
    expect(round.resultType).toBe('input_required');
    const ask = (round.inputRequests as Record<string, { params: { mode: string; url: string } }>)[CONNECT_KEY];
    expect(ask?.params.mode).toBe('url');
    await connect(w, ask?.params.url ?? '', 'alice-at-saas', c, c);
    // The round holds no state: the retry, on another replica, finds the grant in the store.
    const retried = await modernWhoami(await modernCaller(b, 'alice'), 'accept');
    expect(textOf(retried as never)).toBe('alice-at-saas');
    expect(await whoami(await caller(a, 'alice'))).toBe('alice-at-saas');
    // Bob, asked on A, declines on C: his call ends there, and no replica holds a grant of his.
    const asked = await modernWhoami(await modernCaller(a, 'bob'));
    expect(asked.resultType).toBe('input_required');
    const declined = await modernWhoami(await modernCaller(c, 'bob'), 'decline');
    expect(declined.isError).toBe(true);
    expect((declined._meta as Record<string, { code?: string }>)['dev.sluice/error']?.code).toBe(
      'UPSTREAM_CONNECT_REQUIRED',
    );
    expect((await modernWhoami(await modernCaller(b, 'bob'))).resultType).toBe('input_required');
    expect(w.as.grants.filter((g) => g === 'authorization_code')).toHaveLength(1);
  }, 120_000);

  it("two replicas meeting the same caller's expired grant at once refresh it once, and both call as the caller", async () => {
    const w = await world(3, { accessTokenTtlSec: 4, gated: true });
    const gate = w.gate as TokenGate;
    const [a, b, c] = w.replicas as [Replica, Replica, Replica];
    const onA = await caller(a, 'alice');
    await connect(w, (await askedToConnect(onA)).url, 'alice-at-saas', a, a);
    expect(await whoami(onA)).toBe('alice-at-saas');
    const onB = await caller(b, 'alice');
    const onC = await caller(c, 'alice');
    // Once the access token the upstream last saw has expired, the grant is stale on every replica.
    const current = w.tokens.filter((t) => claimsOf(t).sub === 'alice-at-saas').at(-1) as string;
    const expiresAt = (claimsOf(current).exp ?? 0) * 1_000;
    await eventually(() => Date.now() > expiresAt, 'the access token to expire', 10_000);

    const redisClient = new Redis(redis.url);
    open.push(() => redisClient.quit());
    const lockQueue = `${w.prefix}sem:{sluice:upstream-grant:saas:alice}:queue`;
    const refreshesBefore = w.as.grants.filter((g) => g === 'refresh_token').length;
    const [gateBefore, sentBefore] = [gate.refreshes, w.tokens.length];
    gate.holding = true;
    const calls = Promise.all([whoami(onB), whoami(onC)]);
    // The first replica's refresh waits at the token endpoint until the other replica waits too: at the lock
    // (or, were there none, at the token endpoint beside it).
    await eventually(
      async () => gate.held >= 2 || (gate.held === 1 && (await redisClient.zcard(lockQueue)) >= 1),
      'both replicas to be refreshing',
    );
    gate.release();
    expect(await calls).toEqual(['alice-at-saas', 'alice-at-saas']);
    expect(w.as.grants.filter((g) => g === 'refresh_token').length - refreshesBefore).toBe(1);
    expect(gate.refreshes - gateBefore).toBe(1);
    // Every replica now sends the one new token.
    expect(await whoami(onA)).toBe('alice-at-saas');
    const fresh = new Set(w.tokens.slice(sentBefore).filter((t) => claimsOf(t).sub === 'alice-at-saas'));
    expect(fresh.size).toBe(1);
    expect(fresh.has(current)).toBe(false);
  }, 120_000);
});
