// Per-user grants toward an upstream: a caller without one is asked, with a
// URL-mode elicitation, to open the gateway's consent page; a real headless
// chromium walks it through a real authorization server's sign-in and
// consent pages (oidc-provider, authorization code + PKCE); the grant lands
// sealed in the vault under that caller alone, and the upstream, a real MCP
// server over loopback HTTP, sees each caller as their own upstream account.
// The attacks come first: another caller's token, a revoked grant, a
// tampered state or code.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import fc from 'fast-check';
import type { Browser } from 'puppeteer-core';
import { Client, ProtocolErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ResourceTemplate } from '@modelcontextprotocol/server';
import { CoreErrorCode, MemoryStore, createServer, identityOf } from '@sluice/core';
import { CredentialVault } from '@sluice/upstream';
import type { Clock, HttpListener, SluiceServer } from '@sluice/core';
import { captureLogger, textOf } from '@sluice/testing';
import '@sluice/http';
import type { CapturedLogger } from '@sluice/testing';
import {
  CONSENT_GATEWAY,
  perUserAuth,
  startConsentServer,
} from '../../core/test/helpers/consent-authorization-server.js';
import type { ConsentServer } from '../../core/test/helpers/consent-authorization-server.js';
import { startRecordingFront } from '../../core/test/helpers/front.js';
import { confirmingTool } from '../../core/test/fixtures/asking-tool.js';
import { consentInBrowser, launchChromium } from '../../core/test/helpers/consent-browser.js';

const KEYS = { alice: 'alice-key-0123456789abcdef', bob: 'bob-key-0123456789abcdef' } as const;
const VAULT_KEY = randomBytes(32).toString('base64');

let as: ConsentServer;
let browser: Browser;
beforeAll(async () => {
  as = await startConsentServer();
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser.close().catch(() => {});
  await as.close();
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The upstream: verifies tokens bound to it and says whom it sees. */
async function upstream(): Promise<HttpListener> {
  const server = createServer({ name: 'saas', version: '1.0.0' });
  server.tool({
    name: 'whoami',
    handler: (_args, ctx) => ({
      content: [{ type: 'text', text: JSON.stringify({ subject: ctx.auth?.subject, aud: ctx.auth?.claims?.aud }) }],
    }),
  });
  // A resource and a prompt that say whom the upstream sees.
  server.extendSdk((sdk) => {
    sdk.registerResource('me', 'saas://me', {}, (uri, ctx) => ({
      contents: [{ uri: uri.href, text: String(identityOf(ctx.http?.authInfo)?.subject) }],
    }));
    sdk.registerPrompt('me', {}, (ctx) => ({
      messages: [{ role: 'user', content: { type: 'text', text: String(identityOf(ctx.http?.authInfo)?.subject) } }],
    }));
    // A template with completions, so that completion/complete reaches the upstream too.
    const pages = new ResourceTemplate('saas://page/{n}', { list: undefined, complete: { n: () => ['1', '2'] } });
    sdk.registerResource('page', pages, {}, (uri) => ({ contents: [{ uri: uri.href, text: uri.href }] }));
  });
  server.tool({
    name: 'confirm',
    handler: async (_args, ctx) => {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- a caller's own connection speaks 2025-11-25, whose push elicitation this relays
      const answer = await ctx.mcp?.mcpReq.elicitInput({
        mode: 'form',
        message: `Go ahead, ${String(ctx.auth?.subject)}?`,
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      });
      return { content: [{ type: 'text', text: `${String(ctx.auth?.subject)} ${JSON.stringify(answer)}` }] };
    },
  });
  server.tool(confirmingTool('approve'));
  const listener = await server.listen({
    auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 },
  });
  cleanups.push(() => server.close());
  return listener;
}

async function recordingFront(listener: HttpListener): Promise<{ url: URL; tokens: string[] }> {
  const front = await startRecordingFront(listener.url);
  cleanups.push(() => front.close());
  return front;
}

interface Gateway {
  readonly server: SluiceServer;
  readonly listener: HttpListener;
  readonly vault: CredentialVault;
  readonly store: MemoryStore;
  readonly logs: CapturedLogger;
}

/** The system clock, moved forward by `skipMs`: the gateway's view of time, so that grants age without waiting. */
function skippingClock(): Clock & { skipMs: number } {
  return {
    skipMs: 0,
    now() {
      return Date.now() + this.skipMs;
    },
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
  };
}

async function gateway(upstreamUrl: URL, resource: string, clock?: Clock): Promise<Gateway> {
  const store = new MemoryStore();
  const vault = new CredentialVault(store.credentials, { keys: [{ id: 'k1', key: VAULT_KEY }] });
  const logs = captureLogger();
  const server = createServer({
    name: 'gateway',
    version: '1.0.0',
    logger: logs.logger,
    store,
    credentialVault: vault,
    ...(clock ? { clock } : {}),
  });
  cleanups.push(() => server.close());
  const result = await server.import({
    name: 'saas',
    connection: { type: 'http', url: upstreamUrl.href },
    auth: perUserAuth(as.issuer, resource),
  });
  expect(result.skipped).toEqual([]);
  const listener = await server.listen({
    auth: {
      type: 'apiKeys',
      keys: [
        { name: 'alice', key: KEYS.alice },
        { name: 'bob', key: KEYS.bob },
      ],
    },
  });
  as.register(new URL('/oauth/upstream/callback', listener.url).href);
  return { server, listener, vault, store, logs };
}

async function caller(url: URL, key: string): Promise<Client> {
  const client = new Client(
    { name: 'caller', version: '1.0.0' },
    { capabilities: { elicitation: { url: {}, form: {} } } },
  );
  // Answers a form elicitation relayed from the upstream with who was asked.
  client.setRequestHandler('elicitation/create', (request) => ({
    action: 'accept',
    content: { ok: request.params.message.includes(key === KEYS.alice ? 'alice-at-saas' : 'bob-at-saas') },
  }));
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  cleanups.push(() => client.close());
  return client;
}

/**
 * A 2026-07-28 caller: a URL input request's link goes to `open` (a person
 * who may connect, then says whether they did); a form is answered with
 * whether it names `login`.
 */
async function modernCaller(
  url: URL,
  key: string,
  login: string,
  open: (link: string) => Promise<'accept' | 'decline'>,
): Promise<Client> {
  const client = new Client(
    { name: 'modern-caller', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { url: {}, form: {} } },
      inputRequired: { autoFulfill: true },
    },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    const { params } = request;
    if (params.mode === 'url') return { action: await open(params.url) };
    return { action: 'accept', content: { ok: params.message.includes(login) } };
  });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  cleanups.push(() => client.close());
  return client;
}

/** Waits for `condition`, failing with `what` if it has not come true within 20 s. */
async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Asked {
  readonly url: string;
  readonly elicitationId: string;
  readonly message: string;
}

/** Calls `whoami` expecting the gateway to ask for a connection: the URL elicitation it answered with. */
function askedToConnect(client: Client): Promise<Asked> {
  return askedBy(() => client.callTool({ name: 'whoami', arguments: {} }));
}

/** Sends `request` expecting the gateway to ask for a connection: the URL elicitation it answered with. */
async function askedBy(request: () => Promise<unknown>): Promise<Asked> {
  const error = await request().then(
    (result) => {
      throw new Error(`expected a URL elicitation, got ${JSON.stringify(result)}`);
    },
    (error: unknown) => error as { code?: number; data?: { elicitations?: Record<string, unknown>[] } },
  );
  expect(error.code).toBe(ProtocolErrorCode.UrlElicitationRequired);
  const [elicitation] = error.data?.elicitations ?? [];
  expect(elicitation?.mode).toBe('url');
  return elicitation as unknown as Asked;
}

async function whoami(client: Client): Promise<{ subject: string; aud: unknown }> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  expect(result.isError, textOf(result)).toBeFalsy();
  return JSON.parse(textOf(result)) as { subject: string; aud: unknown };
}

/** A person in a browser connects `login` through the consent page at `url` (see consent-browser.ts). */
function consent(url: string, login: string, intercept = false): Promise<string> {
  return consentInBrowser(browser, url, login, { intercept });
}

describe('per_user grants toward an upstream', () => {
  it('asks each caller to connect, and each then reaches the upstream as their own account only', async () => {
    const target = await upstream();
    const front = await recordingFront(target);
    const { listener, store, logs } = await gateway(front.url, target.url.href);
    const alice = await caller(listener.url, KEYS.alice);
    const bob = await caller(listener.url, KEYS.bob);

    const askedAlice = await askedToConnect(alice);
    // Logged by code and upstream, never with the link.
    const [asked] = logs.events('upstream.connect_required');
    expect(asked).toMatchObject({ code: CoreErrorCode.UPSTREAM_CONNECT_REQUIRED, upstream: 'saas', caller: 'alice' });
    expect(logs.text()).not.toContain(new URL(askedAlice.url).searchParams.get('ticket') ?? '-');
    expect(askedAlice.message).toMatch(/saas/);
    expect(new URL(askedAlice.url).origin).toBe(listener.url.origin);
    expect(await consent(askedAlice.url, 'alice-at-saas')).toContain('<h1>Connected</h1>');
    expect(await whoami(alice)).toEqual({ subject: 'alice-at-saas', aud: target.url.href });

    // Bob is asked separately: Alice's grant is hers alone.
    const askedBob = await askedToConnect(bob);
    expect(askedBob.url).not.toBe(askedAlice.url);
    expect(askedBob.elicitationId).not.toBe(askedAlice.elicitationId);
    expect(await consent(askedBob.url, 'bob-at-saas')).toContain('<h1>Connected</h1>');

    // Interleaved calls: every one reaches the upstream as its own caller.
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => whoami(i % 2 === 0 ? alice : bob).then((r) => [i, r.subject] as const)),
    );
    for (const [i, subject] of results) expect(subject).toBe(i % 2 === 0 ? 'alice-at-saas' : 'bob-at-saas');

    // No token the upstream saw belongs to the gateway's listener or to another audience.
    for (const token of front.tokens) expect(decodeJwt(token).aud).toBe(target.url.href);
    // The vault holds ciphertext only.
    const userTokens = front.tokens.filter((t) => decodeJwt(t).sub !== CONSENT_GATEWAY.id);
    expect(userTokens.length).toBeGreaterThan(0);
    for (const subject of ['alice', 'bob']) {
      const sealed = await store.credentials.get({ upstream: 'saas', subject });
      expect(sealed).toBeDefined();
      for (const token of userTokens) expect(sealed).not.toContain(token);
    }
  }, 120_000);

  it("relays the upstream's elicitation during a call on a caller's own connection to that caller", async () => {
    const target = await upstream();
    const { listener } = await gateway(target.url, target.url.href);
    const alice = await caller(listener.url, KEYS.alice);
    await consent((await askedToConnect(alice)).url, 'alice-at-saas');
    const result = await alice.callTool({ name: 'confirm', arguments: {} });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toBe('alice-at-saas {"action":"accept","content":{"ok":true}}');
  }, 120_000);

  it('refreshes a grant with its refresh token before it expires, keeping the caller who they are', async () => {
    const target = await upstream();
    const front = await recordingFront(target);
    const clock = skippingClock();
    const { listener, store } = await gateway(front.url, target.url.href, clock);
    const alice = await caller(listener.url, KEYS.alice);
    await consent((await askedToConnect(alice)).url, 'alice-at-saas');
    await whoami(alice);
    const first = front.tokens.filter((t) => decodeJwt(t).sub === 'alice-at-saas');
    const sealedBefore = await store.credentials.get({ upstream: 'saas', subject: 'alice' });
    // Past the refresh point (300 s tokens, replaced 60 s early): the next call gets a new token first.
    clock.skipMs = 250_000;
    expect(await whoami(alice)).toEqual({ subject: 'alice-at-saas', aud: target.url.href });
    const used = front.tokens.filter((t) => decodeJwt(t).sub === 'alice-at-saas');
    const fresh = used.at(-1) ?? '';
    expect(first).not.toContain(fresh);
    expect(await store.credentials.get({ upstream: 'saas', subject: 'alice' })).not.toBe(sealedBefore);
    // Refreshed once: later calls reuse the new token.
    await whoami(alice);
    expect(front.tokens.filter((t) => decodeJwt(t).sub === 'alice-at-saas').at(-1)).toBe(fresh);
  }, 120_000);

  it("reads resources and gets prompts with the caller's own grant, never the gateway's", async () => {
    const target = await upstream();
    const { listener } = await gateway(target.url, target.url.href);
    const alice = await caller(listener.url, KEYS.alice);
    const refused = (await alice.readResource({ uri: 'saas://me' }).catch((e: unknown) => e)) as {
      code?: number;
      data?: { elicitations?: { url: string }[] };
    };
    expect(refused.code).toBe(ProtocolErrorCode.UrlElicitationRequired);
    await consent(refused.data?.elicitations?.[0]?.url ?? '', 'alice-at-saas');
    const read = await alice.readResource({ uri: 'saas://me' });
    expect(read.contents[0]).toMatchObject({ text: 'alice-at-saas' });
    const prompt = await alice.getPrompt({ name: 'me' });
    expect(prompt.messages[0]?.content).toMatchObject({ text: 'alice-at-saas' });
  }, 120_000);

  it('never uses a revoked grant again: the caller is asked to connect anew', async () => {
    const target = await upstream();
    const front = await recordingFront(target);
    const { listener, vault } = await gateway(front.url, target.url.href);
    const alice = await caller(listener.url, KEYS.alice);
    await consent((await askedToConnect(alice)).url, 'alice-at-saas');
    await whoami(alice);
    const revokedTokens = front.tokens.filter((t) => decodeJwt(t).sub === 'alice-at-saas');
    expect(revokedTokens.length).toBeGreaterThan(0);

    expect(await vault.revoke({ upstream: 'saas', subject: 'alice' })).toBe(1);
    const seen = front.tokens.length;
    await askedToConnect(alice);
    await askedToConnect(alice);
    for (const token of front.tokens.slice(seen)) expect(revokedTokens).not.toContain(token);
  }, 120_000);

  it('refuses an unknown, replayed or swapped state, and a code redeemed without its own PKCE verifier', async () => {
    const target = await upstream();
    const { listener, vault } = await gateway(target.url, target.url.href);
    const alice = await caller(listener.url, KEYS.alice);
    const bob = await caller(listener.url, KEYS.bob);
    const callback = new URL('/oauth/upstream/callback', listener.url);

    // A state the gateway never issued.
    const forged = new URL(callback);
    forged.search = new URLSearchParams({ code: 'x', state: 'never-issued' }).toString();
    const answer = await fetch(forged);
    expect(answer.status).toBe(400);

    // Alice's code, delivered with the state of Bob's flow: Bob's verifier does not match Alice's challenge.
    const aliceCallback = new URL(await consent((await askedToConnect(alice)).url, 'alice-at-saas', true));
    const bobCallback = new URL(await consent((await askedToConnect(bob)).url, 'mallory-at-saas', true));
    const swapped = new URL(callback);
    swapped.search = new URLSearchParams({
      code: aliceCallback.searchParams.get('code') ?? '',
      state: bobCallback.searchParams.get('state') ?? '',
      iss: as.issuer,
    }).toString();
    const swappedAnswer = await fetch(swapped);
    expect(swappedAnswer.status).toBe(400);
    expect(await swappedAnswer.text()).not.toContain(aliceCallback.searchParams.get('code') ?? '-');
    expect(await vault.list()).toEqual([]);

    // Bob's own state is spent by the failed attempt: replaying it with his own code is refused too.
    expect((await fetch(bobCallback)).status).toBe(400);
    expect(await vault.list()).toEqual([]);

    // A fresh, untampered flow succeeds once; its callback replayed is refused.
    const asked = await askedToConnect(alice);
    const good = await consent(asked.url, 'alice-at-saas', true);
    expect((await fetch(good)).status).toBe(200);
    expect((await fetch(good)).status).toBe(400);
    expect(await vault.list()).toEqual([{ upstream: 'saas', subject: 'alice' }]);
    // The consent link itself is single-use.
    expect((await fetch(asked.url)).status).toBe(400);
    expect((await whoami(alice)).subject).toBe('alice-at-saas');
  }, 120_000);

  it('refuses a callback whose issuer is not the upstream’s authorization server', async () => {
    const target = await upstream();
    const { listener, vault } = await gateway(target.url, target.url.href);
    const alice = await caller(listener.url, KEYS.alice);
    const good = new URL(await consent((await askedToConnect(alice)).url, 'alice-at-saas', true));
    good.searchParams.set('iss', 'http://127.0.0.1:1/elsewhere');
    expect((await fetch(good)).status).toBe(400);
    expect(await vault.list()).toEqual([]);
  }, 120_000);

  it('answers any hostile query on the consent routes with a refusal page, and stores nothing', async () => {
    const target = await upstream();
    const { listener, vault } = await gateway(target.url, target.url.href);
    const value = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.constant('A'.repeat(43)),
      fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      // Past the longest code the callback reads; kept under the listener's header limit, which refuses the rest.
      fc.stringMatching(/^[a-z]{4097,4200}$/),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/oauth/upstream/connect', '/oauth/upstream/callback'),
        fc.dictionary(fc.constantFrom('ticket', 'state', 'code', 'iss', 'error'), value, { maxKeys: 2 }),
        fc.constantFrom('GET', 'POST'),
        async (path, params, method) => {
          const url = new URL(path, listener.url);
          url.search = new URLSearchParams(params).toString();
          const answer = await fetch(url, { method, signal: AbortSignal.timeout(5_000) });
          const page = await answer.text();
          expect([400, 405]).toContain(answer.status);
          expect(answer.headers.get('cache-control')).toBe('no-store');
          expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
          expect(page).not.toContain('<script');
        },
      ),
      { numRuns: 60 },
    );
    expect(await vault.list()).toEqual([]);
  }, 120_000);

  it('tells the caller when the consent completes (notifications/elicitation/complete), for the elicitation it was asked with', async () => {
    const target = await upstream();
    const { listener } = await gateway(target.url, target.url.href);
    const alice = await caller(listener.url, KEYS.alice);
    const bob = await caller(listener.url, KEYS.bob);
    const completed = { alice: [] as string[], bob: [] as string[] };
    alice.setNotificationHandler('notifications/elicitation/complete', (n) => {
      completed.alice.push(n.params.elicitationId);
    });
    bob.setNotificationHandler('notifications/elicitation/complete', (n) => {
      completed.bob.push(n.params.elicitationId);
    });
    const askedBob = await askedToConnect(bob);
    const asked = await askedToConnect(alice);
    expect(await consent(asked.url, 'alice-at-saas')).toContain('<h1>Connected</h1>');
    await eventually(() => completed.alice.length > 0, "the completion of Alice's elicitation");
    expect(completed.alice).toEqual([asked.elicitationId]);
    // Bob was asked too, and has not connected: nothing completed for him.
    expect(completed.bob).not.toContain(askedBob.elicitationId);
    expect(completed.bob).toEqual([]);
    expect((await whoami(alice)).subject).toBe('alice-at-saas');
  }, 120_000);

  it('tells the caller when the consent completes for a resource read, a prompt get and a completion that asked it', async () => {
    const target = await upstream();
    const { listener } = await gateway(target.url, target.url.href);
    const alice = await caller(listener.url, KEYS.alice);
    const completed: string[] = [];
    alice.setNotificationHandler('notifications/elicitation/complete', (n) => {
      completed.push(n.params.elicitationId);
    });
    const asked = [
      await askedBy(() => alice.readResource({ uri: 'saas://me' })),
      await askedBy(() => alice.getPrompt({ name: 'me' })),
      await askedBy(() =>
        alice.complete({ ref: { type: 'ref/resource', uri: 'saas://page/{n}' }, argument: { name: 'n', value: '' } }),
      ),
    ];
    expect(new Set(asked.map((a) => a.elicitationId)).size).toBe(3);
    // Each link connects the same account; each completion is told for the elicitation it was asked with, in turn.
    for (const [i, one] of asked.entries()) {
      expect(await consent(one.url, 'alice-at-saas')).toContain('<h1>Connected</h1>');
      await eventually(() => completed.length > i, `the completion of elicitation ${i + 1}`);
      expect(completed).toEqual(asked.slice(0, i + 1).map((a) => a.elicitationId));
    }
    const read = await alice.readResource({ uri: 'saas://me' });
    expect(read.contents[0]).toMatchObject({ text: 'alice-at-saas' });
    const completion = await alice.complete({
      ref: { type: 'ref/resource', uri: 'saas://page/{n}' },
      argument: { name: 'n', value: '' },
    });
    expect(completion.completion.values).toEqual(['1', '2']);
  }, 120_000);
});

describe('per_user grants for 2026-07-28 callers', () => {
  it('asks a caller without a grant with a URL input request; the retried call then reaches the upstream as them', async () => {
    const target = await upstream();
    const { listener, logs } = await gateway(target.url, target.url.href);
    const links: string[] = [];
    const person = (login: string) => async (link: string) => {
      links.push(link);
      expect(await consent(link, login)).toContain('<h1>Connected</h1>');
      return 'accept' as const;
    };
    const alice = await modernCaller(listener.url, KEYS.alice, 'alice-at-saas', person('alice-at-saas'));
    expect(await whoami(alice)).toEqual({ subject: 'alice-at-saas', aud: target.url.href });
    expect(links).toHaveLength(1);
    expect(new URL(links[0] ?? '').origin).toBe(listener.url.origin);
    expect(logs.events('upstream.connect_required')).toHaveLength(1);
    expect(logs.text()).not.toContain(new URL(links[0] ?? '').searchParams.get('ticket') ?? '-');
    // Connected: later calls are not asked again.
    expect((await whoami(alice)).subject).toBe('alice-at-saas');
    expect(links).toHaveLength(1);
    // Bob is asked separately, and reaches the upstream as himself.
    const bob = await modernCaller(listener.url, KEYS.bob, 'bob-at-saas', person('bob-at-saas'));
    expect((await whoami(bob)).subject).toBe('bob-at-saas');
    expect(links).toHaveLength(2);
    expect(links[1]).not.toBe(links[0]);
  }, 120_000);

  it('asks again with a fresh link when the caller says it connected but did not, and refuses once it declines', async () => {
    const target = await upstream();
    const { listener, vault } = await gateway(target.url, target.url.href);
    const links: string[] = [];
    const alice = await modernCaller(listener.url, KEYS.alice, 'alice-at-saas', (link) => {
      links.push(link);
      return Promise.resolve(links.length < 2 ? 'accept' : 'decline');
    });
    const result = await alice.callTool({ name: 'whoami', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result._meta?.['dev.sluice/error']).toMatchObject({ code: CoreErrorCode.UPSTREAM_CONNECT_REQUIRED });
    expect(textOf(result)).toMatch(/saas/);
    expect(links).toHaveLength(2);
    expect(links[1]).not.toBe(links[0]);
    expect(await vault.list()).toEqual([]);
  }, 120_000);

  it("relays the upstream's own input request during a call on the caller's connection as a 2026-07-28 round", async () => {
    const target = await upstream();
    const { listener } = await gateway(target.url, target.url.href);
    const alice = await modernCaller(listener.url, KEYS.alice, 'alice-at-saas', async (link) => {
      await consent(link, 'alice-at-saas');
      return 'accept';
    });
    const result = await alice.callTool({ name: 'approve', arguments: {} });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toBe('alice-at-saas {"ok":true}');
  }, 120_000);

  it("asks with a URL input request on a resource read too, then reads and gets prompts with the caller's grant", async () => {
    const target = await upstream();
    const { listener } = await gateway(target.url, target.url.href);
    const links: string[] = [];
    const alice = await modernCaller(listener.url, KEYS.alice, 'alice-at-saas', async (link) => {
      links.push(link);
      await consent(link, 'alice-at-saas');
      return 'accept';
    });
    const read = await alice.readResource({ uri: 'saas://me' });
    expect(read.contents[0]).toMatchObject({ text: 'alice-at-saas' });
    expect(links).toHaveLength(1);
    const prompt = await alice.getPrompt({ name: 'me' });
    expect(prompt.messages[0]?.content).toMatchObject({ text: 'alice-at-saas' });
    expect(links).toHaveLength(1);
  }, 120_000);
});
