// Sluice as an OAuth client of its upstreams: a real authorization server
// (oidc-provider) issues audience-bound tokens, and the upstream is a real
// MCP server over loopback HTTP that verifies them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { CoreErrorCode, SluiceError, createServer } from '@sluice/core';
import type { HttpListener, ImportOptions, SluiceServer } from '@sluice/core';
import { FakeClock, captureLogger, errorOf, textOf } from '@sluice/testing';
import { READER, startAuthorizationServer } from '../../core/test/helpers/authorization-server.js';
import type { AuthorizationServer } from '../../core/test/helpers/authorization-server.js';
import { call, connectClient } from '../../core/test/fixtures/upstream-helpers.js';
import { startFront } from '../../core/test/helpers/front.js';
import '@sluice/http';
import '@sluice/upstream';

let as: AuthorizationServer;
beforeAll(async () => {
  as = await startAuthorizationServer();
});
afterAll(() => as.close());

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Seen {
  subject: string;
  clientId: string;
  jti: string;
  aud: unknown;
}

/** A real MCP server behind OAuth: it accepts only tokens whose audience is its own URL. */
async function protectedUpstream(auth = true): Promise<HttpListener> {
  const upstream = createServer({ name: 'saas', version: '1.0.0' });
  upstream.tool({
    name: 'whoami',
    handler: (_args, ctx) => ({
      content: [
        {
          type: 'text',
          text: JSON.stringify({
            subject: ctx.auth?.subject,
            clientId: ctx.auth?.clientId,
            jti: ctx.auth?.claims?.jti,
            aud: ctx.auth?.claims?.aud,
          }),
        },
      ],
    }),
  });
  const listener = await upstream.listen(
    auth ? { auth: { type: 'oauth', authorizationServers: [as.issuer], jwksRefreshCooldownSec: 0 } } : {},
  );
  cleanups.push(() => upstream.close());
  return listener;
}

/** Forwards token requests to the authorization server, counting them. */
async function countingTokenEndpoint(): Promise<{ url: string; count: () => number; refuse: () => void }> {
  let count = 0;
  let refusing = false;
  const server = http.createServer((req, res) => {
    count++;
    if (refusing) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_client', error_description: 'client authentication failed' }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void fetch(`${as.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? '', authorization: req.headers.authorization ?? '' },
        body: Buffer.concat(chunks),
      }).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(await answer.text());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    count: () => count,
    refuse: () => (refusing = true),
  };
}

/** A front for the upstream that answers 401 with a challenge to tokens it was told are revoked. */
async function revokingFront(listener: HttpListener): Promise<{ url: URL; revokeLast: () => void }> {
  const revoked = new Set<string>();
  let last: string | undefined;
  const front = await startFront(listener.url, (req, res) => {
    const authorization = req.headers.authorization ?? '';
    last = authorization;
    if (!revoked.has(authorization)) return false;
    res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' });
    res.end();
    return true;
  });
  cleanups.push(() => front.close());
  return { url: front.url, revokeLast: () => last !== undefined && revoked.add(last) };
}

interface Gateway {
  server: SluiceServer;
  client: Client;
  skipped: readonly { reason: string }[];
}

async function gateway(
  listener: { readonly url: URL },
  auth: ImportOptions['auth'],
  extra: { clock?: FakeClock; transport?: 'node' | 'sdk'; logger?: ReturnType<typeof captureLogger> } = {},
): Promise<Gateway> {
  const server = createServer({
    name: 'gateway',
    version: '1.0.0',
    ...(extra.clock ? { clock: extra.clock } : {}),
    ...(extra.logger ? { logger: extra.logger.logger } : {}),
  });
  cleanups.push(() => server.close());
  const result = await server.import({
    name: 'saas',
    connection: { type: 'http', url: listener.url.href, transport: extra.transport ?? 'node' },
    auth,
  });
  const { client } = await connectClient(server);
  cleanups.push(() => client.close());
  return { server, client, skipped: result.skipped };
}

async function whoami(client: Client): Promise<Seen> {
  const result = await call(client, 'whoami');
  expect(result.isError, textOf(result)).toBeFalsy();
  return JSON.parse(textOf(result)) as Seen;
}

const readerCredentials = { type: 'client_credentials', clientId: READER.id, clientSecret: READER.secret } as const;

describe('client_credentials to an upstream', () => {
  it('refuses a gateway without auth, showing that the upstream checks tokens', async () => {
    const listener = await protectedUpstream();
    const server = createServer({ name: 'gateway', version: '1.0.0' });
    cleanups.push(() => server.close());
    const result = await server.import({ name: 'saas', connection: { type: 'http', url: listener.url.href } });
    expect(result.imported).toEqual([]);
    expect(result.skipped[0]?.reason).toMatch(/Upstream "saas" could not be reached/);
  });

  it.each(['node', 'sdk'] as const)(
    'discovers the authorization server from the upstream and calls with a token bound to it (%s transport)',
    async (transport) => {
      const listener = await protectedUpstream();
      const { client, skipped } = await gateway(listener, { ...readerCredentials, scope: 'read' }, { transport });
      expect(skipped).toEqual([]);
      const seen = await whoami(client);
      expect(seen).toMatchObject({ subject: READER.id, clientId: READER.id, aud: listener.url.href });
    },
  );

  it('keeps one token while it is fresh and replaces it before it expires', async () => {
    const clock = new FakeClock(Date.now());
    const listener = await protectedUpstream();
    const tokens = await countingTokenEndpoint();
    const { client } = await gateway(listener, { ...readerCredentials, tokenEndpoint: tokens.url }, { clock });
    const first = await whoami(client);
    // The helper's tokens live 300 s; the default is to replace them 60 s early.
    clock.advance(239_000);
    expect((await whoami(client)).jti).toBe(first.jti);
    expect(tokens.count()).toBe(1);
    clock.advance(2_000);
    const renewed = await whoami(client);
    expect(renewed.jti).not.toBe(first.jti);
    expect(renewed.subject).toBe(READER.id);
    expect(tokens.count()).toBe(2);
  });

  it.each(['node', 'sdk'] as const)(
    'answers a 401 with one new token shared by concurrent calls (%s transport)',
    async (transport) => {
      const listener = await protectedUpstream();
      const front = await revokingFront(listener);
      const tokens = await countingTokenEndpoint();
      const { client } = await gateway(
        front,
        { ...readerCredentials, tokenEndpoint: tokens.url, resource: listener.url.href },
        { transport },
      );
      const first = await whoami(client);
      expect(tokens.count()).toBe(1);
      // The upstream no longer accepts the cached token.
      front.revokeLast();
      const seen = await Promise.all(Array.from({ length: 5 }, () => whoami(client)));
      for (const s of seen) expect(s.jti).not.toBe(first.jti);
      expect(new Set(seen.map((s) => s.jti)).size).toBe(1);
      expect(tokens.count()).toBe(2);
    },
  );

  it('gives up after one refresh when the upstream refuses every token, naming the upstream', async () => {
    const listener = await protectedUpstream();
    const tokens = await countingTokenEndpoint();
    // Tokens for another audience: the upstream refuses each one.
    const { server, skipped } = await gateway(listener, {
      ...readerCredentials,
      tokenEndpoint: tokens.url,
      resource: 'http://127.0.0.1:1/elsewhere',
    });
    expect(skipped[0]?.reason).toMatch(/Upstream "saas" could not be reached/);
    expect(skipped[0]?.reason).toMatch(/aud claim is not accepted/);
    expect(tokens.count()).toBe(2);
    expect(server.upstreams()[0]?.health).toBe('down');
  });

  it('names the upstream and the refusal when the client secret is wrong, and never shows a secret', async () => {
    const listener = await protectedUpstream();
    const logs = captureLogger();
    const secret = 'not-the-reader-secret-4242';
    const { skipped } = await gateway(listener, { ...readerCredentials, clientSecret: secret }, { logger: logs });
    const reason = skipped[0]?.reason ?? '';
    expect(reason).toMatch(/authorization server refused a token for upstream "saas" \(invalid_client/);
    expect(reason).not.toContain(secret);
    expect(JSON.stringify(logs.records)).not.toContain(secret);
  });

  it('says what to do when the upstream publishes no protected-resource metadata', async () => {
    const listener = await protectedUpstream(false);
    const { skipped } = await gateway(listener, readerCredentials);
    expect(skipped[0]?.reason).toMatch(/"saas" publishes no protected-resource metadata/);
    expect(skipped[0]?.reason).toMatch(/auth\.issuer/);
  });

  it('refuses a configured issuer the upstream does not name', async () => {
    const listener = await protectedUpstream();
    const { skipped } = await gateway(listener, { ...readerCredentials, issuer: 'http://127.0.0.1:1/other-issuer' });
    expect(skipped[0]?.reason).toMatch(/"saas" does not name the configured authorization server/);
  });

  it('fails a token endpoint that never answers within timeoutMs, instead of hanging', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise((resolve) => {
          silent.closeAllConnections();
          silent.close(resolve);
        }),
    );
    const listener = await protectedUpstream();
    const tokenEndpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/token`;
    const { skipped } = await gateway(listener, { ...readerCredentials, tokenEndpoint, timeoutMs: 200 });
    expect(skipped[0]?.reason).toMatch(/token endpoint of upstream "saas" did not answer within 200 ms/);
  });

  it('refuses auth on a stdio upstream and beside a static authorization header', async () => {
    const server = createServer({ name: 'gateway', version: '1.0.0' });
    cleanups.push(() => server.close());
    const stdio = server.import({
      name: 'local',
      connection: { type: 'stdio', command: 'true' },
      auth: readerCredentials,
    });
    await expect(stdio).rejects.toSatisfy(
      (e: unknown) => SluiceError.is(e) && e.code === CoreErrorCode.INVALID_OPTIONS && /http/.test(e.message),
    );
    const both = server.import({
      name: 'both',
      connection: { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' } },
      auth: readerCredentials,
    });
    await expect(both).rejects.toSatisfy(
      (e: unknown) => SluiceError.is(e) && /static `authorization` header/.test(e.message),
    );
  });
});

describe('an upstream call whose token cannot be renewed', () => {
  it('is an UPSTREAM_UNAUTHORIZED result naming the upstream and what to do', async () => {
    const clock = new FakeClock(Date.now());
    const listener = await protectedUpstream();
    const tokens = await countingTokenEndpoint();
    const { client } = await gateway(listener, { ...readerCredentials, tokenEndpoint: tokens.url }, { clock });
    await whoami(client);
    // The authorization server stops accepting the gateway's client; the cached token then nears expiry.
    tokens.refuse();
    clock.advance(250_000);
    const result = await call(client, 'whoami');
    expect(result.isError).toBe(true);
    expect(errorOf(result)?.code).toBe(CoreErrorCode.UPSTREAM_UNAUTHORIZED);
    expect(textOf(result)).toMatch(/refused a token for upstream "saas" \(invalid_client/);
    expect(textOf(result)).toMatch(/client id and secret/);
    expect(textOf(result)).not.toContain(READER.secret);
  });
});
