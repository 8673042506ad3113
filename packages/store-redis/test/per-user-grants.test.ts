// Per-user grants on two gateway replicas sharing one real Redis: a caller
// connects once (on either replica), both reach the upstream as that
// caller; when the upstream refuses the caller's token with a 401, the
// replicas spend one refresh token between them, whatever number of calls
// hit the refusal at once; a grant revoked on one replica is never sent
// again by the other. The authorization server is a real oidc-provider, the
// consent is walked by a real headless chromium, the upstream is a real MCP
// server that checks audience-bound tokens.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createServer } from '@sluice/core';
import { CredentialVault } from '@sluice/upstream';
import type { HttpListener } from '@sluice/core';
import { captureLogger, textOf, urlElicitationOf } from '@sluice/testing';
import type { UrlElicitation } from '@sluice/testing';
import '@sluice/http';
import { perUserAuth, startConsentServer } from '../../core/test/helpers/consent-authorization-server.js';
import type { ConsentServer } from '../../core/test/helpers/consent-authorization-server.js';
import { consentInBrowser, launchChromium } from '../../core/test/helpers/consent-browser.js';
import { startFront } from '../../core/test/helpers/front.js';
import { redisStore } from '../src/index.js';
import { startRedis } from './helpers/redis-server.js';
import { eventually, uniquePrefix } from './helpers/stores.js';

const redis = await startRedis();
const ALICE = 'alice-key-0123456789abcdef';
const VAULT_KEY = { id: 'k1', key: randomBytes(32).toString('base64') };

let as: ConsentServer;
let browser: Awaited<ReturnType<typeof launchChromium>>;
beforeAll(async () => {
  as = await startConsentServer();
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser.close().catch(() => {});
  await as.close();
  await redis.close();
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The subject a JWT names (the upstream checks the token; the test only reads it). */
const subjectOf = (token: string): unknown =>
  (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sub?: unknown }).sub;

/** The upstream: verifies tokens bound to it and says whom it sees. */
async function upstream(): Promise<HttpListener> {
  const server = createServer({ name: 'saas', version: '1.0.0', logger: captureLogger().logger });
  server.tool({
    name: 'whoami',
    handler: (_args, ctx) => ({ content: [{ type: 'text', text: String(ctx.auth?.subject) }] }),
  });
  const listener = await server.listen({
    auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 },
  });
  cleanups.push(() => server.close());
  return listener;
}

/** A front for the upstream that answers 401 to the tokens in `refused`, and records every other token it passes. */
async function refusingFront(target: URL): Promise<{ url: URL; tokens: string[]; refused: Set<string> }> {
  const tokens: string[] = [];
  const refused = new Set<string>();
  const front = await startFront(target, (req, res) => {
    const token = req.headers.authorization?.replace(/^Bearer /, '');
    if (token === undefined) return false;
    if (refused.has(token)) {
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
      return true;
    }
    tokens.push(token);
    return false;
  });
  cleanups.push(() => front.close());
  return { url: front.url, tokens, refused };
}

interface Replica {
  readonly listener: HttpListener;
  readonly vault: CredentialVault;
}

/** A gateway replica on the shared Redis (one key prefix per test); `redirectUri` sends its consent to another replica. */
async function replica(prefix: string, upstreamUrl: URL, resource: string, redirectUri?: string): Promise<Replica> {
  const logger = captureLogger().logger;
  const store = redisStore({ url: redis.url }, { keyPrefix: prefix, logger });
  const vault = new CredentialVault(store.credentials, { keys: [VAULT_KEY] });
  const server = createServer({ name: 'gateway', version: '1.0.0', logger, store, credentialVault: vault });
  cleanups.push(() => store.close());
  cleanups.push(() => server.close());
  const result = await server.import({
    name: 'saas',
    connection: { type: 'http', url: upstreamUrl.href },
    auth: perUserAuth(as.issuer, resource, redirectUri),
  });
  expect(result.skipped).toEqual([]);
  const listener = await server.listen({ auth: { type: 'apiKeys', keys: [{ name: 'alice', key: ALICE }] } });
  return { listener, vault };
}

/** Two replicas on one Redis prefix; both send the browser back to the first one's callback. */
async function twoReplicas(upstreamUrl: URL, resource: string): Promise<[Replica, Replica]> {
  const prefix = uniquePrefix();
  const a = await replica(prefix, upstreamUrl, resource);
  const callback = new URL('/oauth/upstream/callback', a.listener.url).href;
  as.register(callback);
  const b = await replica(prefix, upstreamUrl, resource, callback);
  return [a, b];
}

async function caller(url: URL): Promise<Client> {
  const client = new Client({ name: 'caller', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } }),
  );
  cleanups.push(() => client.close());
  return client;
}

/** Calls `whoami` expecting to be asked to connect: the elicitation's link and id. */
function askedToConnect(client: Client): Promise<UrlElicitation> {
  return urlElicitationOf(client.callTool({ name: 'whoami', arguments: {} }));
}

async function whoami(client: Client): Promise<string> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  expect(result.isError, textOf(result)).toBeFalsy();
  return textOf(result);
}

describe('per_user grants on replicas sharing Redis', () => {
  it('connects once for both replicas, tells the client that was asked, and answers a 401 with one refresh for all', async () => {
    const target = await upstream();
    const front = await refusingFront(target.url);
    const [a, b] = await twoReplicas(front.url, target.url.href);
    const onA = await caller(a.listener.url);
    const onB = await caller(b.listener.url);
    const completed: string[] = [];
    onB.setNotificationHandler('notifications/elicitation/complete', (n) => {
      completed.push(n.params.elicitationId);
    });

    // Asked on B, whose link leads to A's consent page: the ticket, the state and the grant live in Redis.
    const asked = await askedToConnect(onB);
    expect(new URL(asked.url).origin).toBe(a.listener.url.origin);
    expect(await consentInBrowser(browser, asked.url, 'alice-at-saas')).toContain('<h1>Connected</h1>');
    // A took the callback; B, which asked, tells its client.
    await eventually('the client on B hears the consent completed', () => completed.length > 0, 20_000);
    expect(completed).toEqual([asked.elicitationId]);
    expect(await whoami(onA)).toBe('alice-at-saas');
    expect(await whoami(onB)).toBe('alice-at-saas');

    // The upstream now refuses Alice's token: every call meets a 401 at once, on both replicas.
    const current = front.tokens.filter((t) => subjectOf(t) === 'alice-at-saas').at(-1) ?? '';
    front.refused.add(current);
    const grantsBefore = as.grants.length;
    const seen = front.tokens.length;
    const subjects = await Promise.all(Array.from({ length: 12 }, (_, i) => whoami(i % 2 === 0 ? onA : onB)));
    expect(subjects).toEqual(Array.from({ length: 12 }, () => 'alice-at-saas'));
    // One refresh between the two replicas and all twelve calls.
    expect(as.grants.slice(grantsBefore)).toEqual(['refresh_token']);
    const fresh = new Set(front.tokens.slice(seen).filter((t) => subjectOf(t) === 'alice-at-saas'));
    expect(fresh.size).toBe(1);
    expect(fresh.has(current)).toBe(false);
  }, 180_000);

  it('never sends a grant revoked on one replica from the other: the caller is asked to connect again', async () => {
    const target = await upstream();
    const front = await refusingFront(target.url);
    const [a, b] = await twoReplicas(front.url, target.url.href);
    const onA = await caller(a.listener.url);
    await consentInBrowser(browser, (await askedToConnect(onA)).url, 'alice-at-saas');
    expect(await whoami(onA)).toBe('alice-at-saas');
    const revoked = new Set(front.tokens.filter((t) => subjectOf(t) === 'alice-at-saas'));

    expect(await b.vault.revoke({ upstream: 'saas', subject: 'alice' })).toBe(1);
    const seen = front.tokens.length;
    await askedToConnect(onA);
    await askedToConnect(onA);
    for (const token of front.tokens.slice(seen)) expect(revoked.has(token)).toBe(false);
  }, 180_000);
});
