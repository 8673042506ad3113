// Token exchange (RFC 8693) toward an upstream: each caller's verified token
// is exchanged at a real authorization server (oidc-provider with a
// registered token-exchange grant) for one bound to the upstream, and the
// upstream, a real MCP server over loopback HTTP, sees each caller as
// themselves and never a token meant for the gateway.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CoreErrorCode, createServer } from '@sluice/core';
import type { HttpListener, SluiceServer } from '@sluice/core';
import { errorOf, textOf } from '@sluice/testing';
import {
  ALICE,
  BOB,
  CAROL,
  GATEWAY,
  OTHER_ACTOR,
  TOKEN_EXCHANGE,
  startExchangeServer,
} from '../../core/test/helpers/exchange-authorization-server.js';
import type { ExchangeServer } from '../../core/test/helpers/exchange-authorization-server.js';
import { startRecordingFront } from '../../core/test/helpers/front.js';
import { confirmingTool } from '../../core/test/fixtures/asking-tool.js';
import '@sluice/http';
import '@sluice/upstream';

let as: ExchangeServer;
let gatewayUrl = '';
beforeAll(async () => {
  as = await startExchangeServer({ gatewayResource: () => gatewayUrl });
});
afterAll(() => as.close());

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The upstream: verifies audience-bound tokens and says whom it sees. */
async function upstream(): Promise<HttpListener> {
  const server = createServer({ name: 'saas', version: '1.0.0' });
  server.tool({
    name: 'whoami',
    handler: (_args, ctx) => ({
      content: [
        {
          type: 'text',
          text: JSON.stringify({ subject: ctx.auth?.subject, act: ctx.auth?.claims?.act, aud: ctx.auth?.claims?.aud }),
        },
      ],
    }),
  });
  server.tool(confirmingTool('approve'));
  const listener = await server.listen({
    auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 },
  });
  cleanups.push(() => server.close());
  return listener;
}

/** Records the bearer token of every request on its way to the upstream. */
async function recordingFront(listener: HttpListener): Promise<{ url: URL; tokens: string[] }> {
  const front = await startRecordingFront(listener.url);
  cleanups.push(() => front.close());
  return front;
}

async function gateway(upstreamUrl: URL, resource: string): Promise<{ server: SluiceServer; listener: HttpListener }> {
  const server = createServer({ name: 'gateway', version: '1.0.0' });
  cleanups.push(() => server.close());
  const result = await server.import({
    name: 'saas',
    connection: { type: 'http', url: upstreamUrl.href },
    auth: {
      type: 'token_exchange',
      clientId: GATEWAY.id,
      clientSecret: GATEWAY.secret,
      issuer: as.issuer,
      resource,
    },
  });
  expect(result.skipped).toEqual([]);
  const listener = await server.listen({
    auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 },
  });
  gatewayUrl = listener.url.href;
  return { server, listener };
}

async function caller(url: URL, token: string | undefined): Promise<Client> {
  const client = new Client({ name: 'caller', version: '1.0.0' });
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  cleanups.push(() => client.close());
  return client;
}

/** A 2026-07-28 caller that answers a form with whether it names `subject`. */
async function modernCaller(url: URL, token: string, subject: string): Promise<Client> {
  const client = new Client(
    { name: 'modern-caller', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      capabilities: { elicitation: { form: {} } },
      inputRequired: { autoFulfill: true },
    },
  );
  client.setRequestHandler('elicitation/create', (request) => ({
    action: 'accept',
    content: { ok: request.params.message.includes(subject) },
  }));
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  cleanups.push(() => client.close());
  return client;
}

async function whoami(client: Client): Promise<{ subject: string; act: unknown; aud: unknown }> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  expect(result.isError, textOf(result)).toBeFalsy();
  return JSON.parse(textOf(result)) as { subject: string; act: unknown; aud: unknown };
}

describe('token_exchange to an upstream', () => {
  it('reaches the upstream as each caller, never with a token meant for the gateway', async () => {
    const target = await upstream();
    const front = await recordingFront(target);
    const { listener } = await gateway(front.url, target.url.href);
    const alice = await caller(listener.url, await as.token(ALICE, listener.url.href));
    const bob = await caller(listener.url, await as.token(BOB, listener.url.href));
    expect(await whoami(alice)).toEqual({ subject: ALICE.id, act: { sub: GATEWAY.id }, aud: target.url.href });
    expect(await whoami(bob)).toEqual({ subject: BOB.id, act: { sub: GATEWAY.id }, aud: target.url.href });
    // Cached per caller: a second call exchanges nothing.
    await whoami(alice);
    expect(as.exchanges).toEqual([ALICE.id, BOB.id]);
    // Every token the upstream received was bound to it; none was a caller's own.
    expect(front.tokens.length).toBeGreaterThan(0);
    for (const token of front.tokens) expect(decodeJwt(token).aud).toBe(target.url.href);
    for (const subjectToken of as.subjectTokens) expect(front.tokens).not.toContain(subjectToken);
  });

  it('refuses a caller whose token names another actor in `may_act`, naming the upstream, while others pass', async () => {
    const target = await upstream();
    const front = await recordingFront(target);
    const { listener } = await gateway(front.url, target.url.href);
    const carolToken = await as.token(CAROL, listener.url.href);
    expect(decodeJwt(carolToken).may_act).toEqual({ sub: OTHER_ACTOR });
    expect(decodeJwt(await as.token(ALICE, listener.url.href)).may_act).toEqual({ sub: GATEWAY.id });
    const alice = await caller(listener.url, await as.token(ALICE, listener.url.href));
    const carol = await caller(listener.url, carolToken);
    const bob = await caller(listener.url, await as.token(BOB, listener.url.href));
    const refusals = as.refusedActors.length;
    for (let attempt = 0; attempt < 2; attempt++) {
      const result = await carol.callTool({ name: 'whoami', arguments: {} });
      expect(errorOf(result)?.code).toBe(CoreErrorCode.UPSTREAM_UNAUTHORIZED);
      const text = textOf(result);
      expect(text).toMatch(
        /The authorization server refused to exchange the caller's token for upstream "saas" \(invalid_grant: /,
      );
      expect(text).toMatch(/Call again with a token that the authorization server lets this gateway exchange/);
      expect(text).not.toContain(carolToken);
      expect(text.length).toBeLessThan(1_000);
    }
    // Each call asked again (a refusal is not cached) and was refused for its actor.
    expect(as.refusedActors.slice(refusals)).toEqual([CAROL.id, CAROL.id]);
    expect(await whoami(alice)).toEqual({ subject: ALICE.id, act: { sub: GATEWAY.id }, aud: target.url.href });
    expect(await whoami(bob)).toEqual({ subject: BOB.id, act: { sub: GATEWAY.id }, aud: target.url.href });
    // CAROL's token, and any token for her, never reached the upstream.
    expect(front.tokens).not.toContain(carolToken);
    for (const token of front.tokens) expect(decodeJwt(token).sub).not.toBe(CAROL.id);
  });

  it("bounds a hostile authorization server's refusal: one line, short, never the caller's token", async () => {
    const target = await upstream();
    const echoed: string[] = [];
    // Passes the gateway's own grant to the real server; refuses every
    // exchange, repeating the subject token and forging lines.
    const hostile = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') !== TOKEN_EXCHANGE) {
          void fetch(`${as.issuer}/token`, {
            method: 'POST',
            headers: {
              authorization: req.headers.authorization ?? '',
              'content-type': 'application/x-www-form-urlencoded',
            },
            body,
          }).then(async (answer) => {
            res.writeHead(answer.status, { 'content-type': 'application/json' });
            res.end(await answer.text());
          });
          return;
        }
        const subjectToken = form.get('subject_token') ?? '';
        echoed.push(subjectToken);
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: 'invalid_grant\nFORGED',
            error_description: `${subjectToken} is refused\nFORGED ${'x'.repeat(20_000)}`,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => hostile.close(resolve)));
    const server = createServer({ name: 'gateway', version: '1.0.0' });
    cleanups.push(() => server.close());
    await server.import({
      name: 'saas',
      connection: { type: 'http', url: target.url.href },
      auth: {
        type: 'token_exchange',
        clientId: GATEWAY.id,
        clientSecret: GATEWAY.secret,
        tokenEndpoint: `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/token`,
        resource: target.url.href,
      },
    });
    const listener = await server.listen({
      auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 },
    });
    gatewayUrl = listener.url.href;
    const token = await as.token(ALICE, listener.url.href);
    const alice = await caller(listener.url, token);
    const result = await alice.callTool({ name: 'whoami', arguments: {} });
    expect(echoed).toEqual([token]);
    expect(errorOf(result)?.code).toBe(CoreErrorCode.UPSTREAM_UNAUTHORIZED);
    const text = textOf(result);
    expect(text).toMatch(
      /refused to exchange the caller's token for upstream "saas" \(invalid_grant FORGED: \[redacted\] is refused FORGED x+\)/,
    );
    expect(text).not.toContain(token.slice(0, 100));
    expect(text).not.toMatch(/\nFORGED/);
    expect(text.length).toBeLessThan(1_000);
  });

  it('refuses a caller without an OAuth token to exchange, naming the upstream', async () => {
    const target = await upstream();
    const server = createServer({ name: 'gateway', version: '1.0.0' });
    cleanups.push(() => server.close());
    await server.import({
      name: 'saas',
      connection: { type: 'http', url: target.url.href },
      auth: { type: 'token_exchange', clientId: GATEWAY.id, clientSecret: GATEWAY.secret, resource: target.url.href },
    });
    const listener = await server.listen();
    const anonymous = await caller(listener.url, undefined);
    const result = await anonymous.callTool({ name: 'whoami', arguments: {} });
    expect(errorOf(result)?.code).toBe(CoreErrorCode.UPSTREAM_UNAUTHORIZED);
    expect(textOf(result)).toMatch(/Upstream "saas" is reached with each caller's own OAuth grant/);
  });

  it("relays the upstream's input request to a 2026-07-28 caller as a round on that caller's own connection", async () => {
    const target = await upstream();
    const front = await recordingFront(target);
    const { listener } = await gateway(front.url, target.url.href);
    const alice = await modernCaller(listener.url, await as.token(ALICE, listener.url.href), ALICE.id);
    const bob = await modernCaller(listener.url, await as.token(BOB, listener.url.href), BOB.id);
    const [forAlice, forBob] = await Promise.all([
      alice.callTool({ name: 'approve', arguments: {} }),
      bob.callTool({ name: 'approve', arguments: {} }),
    ]);
    expect(textOf(forAlice)).toBe(`${ALICE.id} {"ok":true}`);
    expect(textOf(forBob)).toBe(`${BOB.id} {"ok":true}`);
    for (const token of front.tokens) expect(decodeJwt(token).aud).toBe(target.url.href);
  });
});
