// What a caller can make the authorization server do. A loopback
// authorization server counts every request it gets; the listener in front
// must not turn garbage tokens, an outage or random opaque tokens into as
// many requests to it, and must read its answers only up to a bound.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import type { ListenerAuthOptions } from '@sluice/http';
import '@sluice/http';
import { captureLogger } from '@sluice/testing';

interface CountingServer {
  readonly issuer: string;
  hits(path: string): number;
  reset(): void;
  /** How `/jwks` answers now: the key set, an outage, or an endless body. */
  jwks: 'ok' | 503 | 'huge';
  /** How `/introspect` answers a token: its claims, `inactive`, or a failure. */
  introspect: (token: string) => Record<string, unknown> | 503 | 'huge';
  close(): Promise<void>;
}

let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let publicJwk: JWK;

async function countingServer(): Promise<CountingServer> {
  const counts = new Map<string, number>();
  const state: Pick<CountingServer, 'jwks' | 'introspect'> = {
    jwks: 'ok',
    introspect: () => ({ active: false }),
  };
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://as.invalid').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const endless = () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (res.write(chunk));
      };
      res.on('drain', pump);
      res.on('close', () => res.off('drain', pump));
      pump();
    };
    if (path === '/.well-known/oauth-authorization-server') {
      json(200, { issuer, jwks_uri: `${issuer}/jwks` });
      return;
    }
    if (path === '/jwks') {
      if (state.jwks === 503) {
        json(503, { error: 'down' });
        return;
      }
      if (state.jwks === 'huge') {
        endless();
        return;
      }
      json(200, { keys: [publicJwk] });
      return;
    }
    if (path === '/introspect') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const answer = state.introspect(new URLSearchParams(body).get('token') ?? '');
        if (answer === 503) json(503, { error: 'down' });
        else if (answer === 'huge') endless();
        else json(200, answer);
      });
      return;
    }
    json(404, {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    issuer,
    hits: (path: string) => counts.get(path) ?? 0,
    reset: () => counts.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

let as: CountingServer;
const open: SluiceServer[] = [];
beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  as = await countingServer();
});
afterAll(() => as.close());
afterEach(async () => {
  as.jwks = 'ok';
  as.introspect = () => ({ active: false });
  as.reset();
  for (const server of open.splice(0)) await server.close();
});

async function listener(extra: Partial<Extract<ListenerAuthOptions, { type: 'oauth' }>> = {}): Promise<URL> {
  const server = createServer({ name: 'guarded', version: '1.0.0', logger: captureLogger().logger });
  server.tool({ name: 'ping', handler: () => ({ content: [{ type: 'text', text: 'pong' }] }) });
  open.push(server);
  const auth: ListenerAuthOptions = {
    type: 'oauth',
    authorizationServers: [as.issuer],
    jwksRefreshCooldownSec: 0,
    ...extra,
  };
  // A generous guess limit: these tests count the authorization server's work, not the throttle's.
  return (await server.listen({ auth, guessLimits: { maxFailures: 100_000, windowMs: 60_000 } })).url;
}

async function post(url: URL, token: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function jwt(claims: Record<string, unknown>, aud: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: 'read', client_id: 'reader', iss: as.issuer, aud, iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .sign(privateKey);
}

/** Past authentication: the listener then answers the (session-less) ping itself, with 400. */
const AUTHENTICATED = 400;

const garbage = (i: number) =>
  `${Buffer.from(JSON.stringify({ alg: 'ES256', kid: `k${i}` })).toString('base64url')}.e30.c2ln`;

describe('the key set', () => {
  it('is not fetched for JWT-shaped garbage, a foreign issuer or audience, or an expired token', async () => {
    const url = await listener();
    const now = Math.floor(Date.now() / 1000);
    const foreign = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k9' })
      .setIssuer('https://elsewhere.test')
      .setAudience(url.href)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    const otherAudience = await jwt({}, 'https://other.test/mcp');
    const expired = await jwt({ exp: now - 3600 }, url.href);
    for (let i = 0; i < 50; i++) expect(await post(url, garbage(i)), `garbage ${i}`).toBe(401);
    for (const token of ['a.b.c', foreign, otherAudience, expired]) expect(await post(url, token), token).toBe(401);
    expect(as.hits('/jwks')).toBe(0);
    expect(await post(url, await jwt({}, url.href))).toBe(AUTHENTICATED);
    expect(as.hits('/jwks')).toBe(1);
  });

  it('is fetched with backoff while the authorization server answers 503, and again once it is back', async () => {
    const url = await listener();
    as.jwks = 503;
    const token = await jwt({}, url.href);
    const began = Date.now();
    for (let i = 0; i < 100; i++) expect(await post(url, await jwt({ n: i }, url.href))).toBe(401);
    // The waits are 1 s, 2 s, 4 s...: within `elapsed` ms at most log2(elapsed / 1000 + 1) of them end. Two fetches
    // when the 100 requests take under a second, as they do on an idle machine; a loaded one may take longer.
    const elapsed = Date.now() - began;
    expect(as.hits('/jwks')).toBeLessThanOrEqual(2 + Math.floor(Math.log2(elapsed / 1000 + 1)));
    as.jwks = 'ok';
    // The backoff ends (its first steps are short): a good token then gets through.
    let status = 0;
    const deadline = Date.now() + 20_000;
    while (status !== AUTHENTICATED && Date.now() < deadline) {
      status = await post(url, token);
      if (status !== AUTHENTICATED) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(AUTHENTICATED);
  });

  it('stops reading an endless key set at the bound', async () => {
    const url = await listener();
    as.jwks = 'huge';
    const before = process.memoryUsage().rss;
    expect(await post(url, await jwt({}, url.href))).toBe(401);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('introspection', () => {
  const resource = 'http://opaque.sluice.test/mcp';
  const settings = (issuer: string) => ({
    resource,
    introspection: { endpoint: `${issuer}/introspect`, clientId: 'rs', clientSecret: 'rs-secret' },
  });

  it('asks once for a token used many times, and no longer than the token lives', async () => {
    const exp = Math.floor(Date.now() / 1000) + 300;
    as.introspect = (token) =>
      token === 'good-token' ? { active: true, aud: resource, exp, sub: 'alice' } : { active: false };
    const url = await listener(settings(as.issuer));
    for (let i = 0; i < 300; i++) expect(await post(url, 'good-token')).toBe(AUTHENTICATED);
    expect(as.hits('/introspect')).toBe(1);
  });

  it('asks again once a cached token has expired', async () => {
    // Whole seconds: at least two left when the listener starts, however loaded the machine is.
    const exp = Math.floor(Date.now() / 1000) + 3;
    as.introspect = () => ({ active: true, aud: resource, exp, sub: 'alice' });
    const url = await listener({ ...settings(as.issuer), clockToleranceSec: 0 });
    expect(await post(url, 'short-lived')).toBe(AUTHENTICATED);
    expect(as.hits('/introspect')).toBe(1);
    // Until just past the token's expiry, by the clock the listener reads.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now()) + 100));
    await post(url, 'short-lived');
    expect(as.hits('/introspect')).toBe(2);
  });

  it('remembers a refusal briefly: one bad token sent 300 times is asked about once', async () => {
    const url = await listener(settings(as.issuer));
    for (let i = 0; i < 300; i++) expect(await post(url, 'not-a-real-token')).toBe(401);
    expect(as.hits('/introspect')).toBe(1);
  });

  it('asks once for concurrent requests with one token', async () => {
    const exp = Math.floor(Date.now() / 1000) + 300;
    as.introspect = () => ({ active: true, aud: resource, exp });
    const url = await listener(settings(as.issuer));
    const statuses = await Promise.all(Array.from({ length: 20 }, () => post(url, 'shared-token')));
    expect(statuses.every((s) => s === AUTHENTICATED)).toBe(true);
    expect(as.hits('/introspect')).toBe(1);
  });

  it('backs off while the introspection endpoint fails, and reads no answer past the bound', async () => {
    as.introspect = () => 503;
    const url = await listener(settings(as.issuer));
    for (let i = 0; i < 100; i++) expect(await post(url, `random-${i}`)).not.toBe(AUTHENTICATED);
    expect(as.hits('/introspect')).toBeLessThanOrEqual(2);
    const big = await listener(settings(as.issuer));
    as.introspect = () => 'huge';
    const before = process.memoryUsage().rss;
    expect(await post(big, 'any-token')).not.toBe(AUTHENTICATED);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });
});
