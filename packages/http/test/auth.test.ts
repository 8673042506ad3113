// Authentication on the HTTP listener, against a real authorization server
// (oidc-provider) and the SDK's real client: tokens are verified, callers are
// known to every hook, and the caller's credential never leaves the gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, importJWK } from 'jose';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CoreErrorCode, createServer, identityOf } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import type { ListenerAuthOptions } from '@sluice/http';
import type { HttpListener } from '@sluice/core';
import { captureLogger } from '@sluice/testing';
import { READER, WRITER, startAuthorizationServer } from '../../core/test/helpers/authorization-server.js';
import type { AuthorizationServer } from '../../core/test/helpers/authorization-server.js';
import '@sluice/http';

let as: AuthorizationServer;
beforeAll(async () => {
  as = await startAuthorizationServer();
});
afterAll(() => as.close());

function guardedServer(): SluiceServer {
  const server = createServer({ name: 'guarded', version: '1.0.0' });
  server.tool({
    name: 'whoami',
    handler: (_args, ctx) => ({
      content: [{ type: 'text', text: JSON.stringify({ auth: ctx.auth, token: ctx.authInfo?.token }) }],
    }),
  });
  return server;
}

async function listen(auth: ListenerAuthOptions): Promise<{ server: SluiceServer; listener: HttpListener }> {
  const server = guardedServer();
  const listener = await server.listen({ auth });
  return { server, listener };
}

const oauth = (extra: Partial<Extract<ListenerAuthOptions, { type: 'oauth' }>> = {}): ListenerAuthOptions => ({
  type: 'oauth',
  authorizationServers: [as.issuer],
  jwksRefreshCooldownSec: 0,
  ...extra,
});

async function connect(url: URL, token: string): Promise<Client> {
  const client = new Client({ name: 'caller', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/** A raw POST, to read the status and challenge a refused caller gets. */
async function post(url: URL, authorization?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
}

async function whoami(client: Client): Promise<{ auth: Record<string, unknown>; token: string }> {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  return JSON.parse((result.content as { text: string }[])[0]!.text) as {
    auth: Record<string, unknown>;
    token: string;
  };
}

async function forged(claims: Record<string, unknown>, key = as.signingKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: 'read', client_id: 'reader', ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid! })
    .setIssuer((claims.iss as string | undefined) ?? as.issuer)
    .setAudience((claims.aud as string | undefined) ?? 'unset')
    .setIssuedAt(now)
    .setExpirationTime((claims.exp as number | undefined) ?? now + 300)
    .sign(await importJWK(key, 'ES256'));
}

describe('OAuth resource server', () => {
  it('lets a client-credentials token call through, and tells the tool who is calling', async () => {
    const { server, listener } = await listen(oauth());
    const client = await connect(listener.url, await as.token(READER, listener.url.href));
    const seen = await whoami(client);
    expect(seen.auth).toMatchObject({ method: 'oauth', clientId: 'reader', subject: 'reader', scopes: ['read'] });
    // The tool, and so any proxy behind it, never sees the caller's token.
    expect(seen.token).toBe('[redacted]');
    await client.close();
    await server.close();
  });

  it('answers a missing token with 401 and a challenge that points at its metadata', async () => {
    const { server, listener } = await listen(oauth({ scopesSupported: ['read', 'write'] }));
    const response = await post(listener.url);
    expect(response.status).toBe(401);
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer /);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(metadataUrl).toBe(`http://${listener.url.host}/.well-known/oauth-protected-resource/mcp`);
    const metadata = (await (await fetch(metadataUrl!)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      resource: listener.url.href,
      authorization_servers: [as.issuer],
      scopes_supported: ['read', 'write'],
    });
    // The root form of the metadata path answers too.
    expect((await fetch(new URL('/.well-known/oauth-protected-resource', listener.url))).status).toBe(200);
    await server.close();
  });

  it.each([
    ['a token for another resource', async () => as.token(READER, 'http://127.0.0.1:1/other')],
    ['an expired token', async (aud: string) => forged({ aud, exp: Math.floor(Date.now() / 1000) - 3600 })],
    ['a token from another issuer', async (aud: string) => forged({ aud, iss: 'http://127.0.0.1:2' })],
    [
      'a token with a tampered signature',
      async (aud: string) => {
        const token = await as.token(READER, aud);
        const [h, p, s] = token.split('.') as [string, string, string];
        return `${h}.${p}.${(s[0] === 'A' ? 'B' : 'A') + s.slice(1)}`;
      },
    ],
    [
      'an unsigned token (alg: none)',
      async (aud: string) => {
        const enc = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
        const now = Math.floor(Date.now() / 1000);
        return `${enc({ alg: 'none' })}.${enc({ iss: as.issuer, aud, exp: now + 300, scope: 'read write' })}.`;
      },
    ],
    [
      'a token with a changed claim',
      async (aud: string) => {
        const token = await as.token(READER, aud);
        const [h, , s] = token.split('.') as [string, string, string];
        const claims = { iss: as.issuer, aud, exp: Math.floor(Date.now() / 1000) + 300, scope: 'read write' };
        return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
      },
    ],
    ['garbage', async () => 'not-a-token'],
  ])('refuses %s with 401 invalid_token', async (_name, make) => {
    const { server, listener } = await listen(oauth());
    const response = await post(listener.url, `Bearer ${await make(listener.url.href)}`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    await server.close();
  });

  it('refuses a token without the required scope with 403 insufficient_scope', async () => {
    const { server, listener } = await listen(oauth({ requiredScopes: ['write'] }));
    const response = await post(listener.url, `Bearer ${await as.token(READER, listener.url.href)}`);
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    expect(response.headers.get('www-authenticate')).toMatch(/scope="write"/);
    const writer = await connect(listener.url, await as.token(WRITER, listener.url.href));
    expect((await whoami(writer)).auth.scopes).toEqual(['read', 'write']);
    await writer.close();
    await server.close();
  });

  it('refuses a token signed by a key the authorization server rotated out', async () => {
    const { server, listener } = await listen(oauth());
    const old = await as.token(READER, listener.url.href);
    const before = await connect(listener.url, old);
    expect((await whoami(before)).auth.clientId).toBe('reader');
    await before.close();
    await as.rotateKeys();
    // A token under the new key names an unknown kid: the key set is fetched again...
    const after = await connect(listener.url, await as.token(READER, listener.url.href));
    expect((await whoami(after)).auth.clientId).toBe('reader');
    await after.close();
    // ...and the old key is no longer in it.
    expect((await post(listener.url, `Bearer ${old}`)).status).toBe(401);
    await server.close();
  });

  it('verifies opaque tokens by introspection at the authorization server', async () => {
    const resource = 'http://opaque.sluice.test/mcp';
    const introspection = {
      endpoint: `${as.issuer}/token/introspection`,
      clientId: WRITER.id,
      clientSecret: WRITER.secret,
    };
    const { server, listener } = await listen(oauth({ resource, introspection }));
    const token = await as.token(READER, resource);
    expect(token.split('.')).toHaveLength(1); // opaque, not a JWT
    const client = await connect(listener.url, token);
    expect((await whoami(client)).auth).toMatchObject({ method: 'oauth', clientId: 'reader', scopes: ['read'] });
    await client.close();
    // An opaque token for another resource is not accepted here.
    const other = await as.token(READER, 'http://opaque.elsewhere.test/mcp');
    expect((await post(listener.url, `Bearer ${other}`)).status).toBe(401);
    expect((await post(listener.url, 'Bearer unknown-opaque-token')).status).toBe(401);
    await server.close();
  });

  it("lets the SDK client's OAuth support discover the server from the 401 and call it", async () => {
    const { server, listener } = await listen(oauth());
    const client = new Client({ name: 'discovering', version: '1.0.0' });
    const authProvider = new ClientCredentialsProvider({
      clientId: READER.id,
      clientSecret: READER.secret,
      scope: 'read',
      expectedIssuer: as.issuer,
    });
    await client.connect(new StreamableHTTPClientTransport(listener.url, { authProvider }));
    expect((await whoami(client)).auth).toMatchObject({ clientId: 'reader', scopes: ['read'] });
    await client.close();
    await server.close();
  });
});

describe('API keys', () => {
  const keys: ListenerAuthOptions = {
    type: 'apiKeys',
    keys: [
      { name: 'ci-bot', key: 'k'.repeat(32), scopes: ['read'] },
      { name: 'ops', key: 'o'.repeat(40), scopes: ['read', 'write'] },
    ],
  };

  it('knows each caller by the name of its key', async () => {
    const { server, listener } = await listen(keys);
    const client = await connect(listener.url, 'o'.repeat(40));
    expect((await whoami(client)).auth).toMatchObject({ method: 'apiKey', keyName: 'ops', scopes: ['read', 'write'] });
    await client.close();
    await server.close();
  });

  it('refuses an unknown key, a prefix of a real one, and an over-long header', async () => {
    const { server, listener } = await listen(keys);
    for (const header of ['Bearer wrong-key-0123456789', `Bearer ${'k'.repeat(31)}`, `Bearer ${'k'.repeat(9_000)}`]) {
      const response = await post(listener.url, header);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    await server.close();
  });

  it('binds a 2025-11-25 session to the caller who opened it', async () => {
    const { server, listener } = await listen(keys);
    const owner = await connect(listener.url, 'k'.repeat(32));
    const sessionId = (owner.transport as StreamableHTTPClientTransport).sessionId;
    expect(sessionId).toBeDefined();
    const stolen = await fetch(listener.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${'o'.repeat(40)}`,
        'mcp-session-id': sessionId!,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(stolen.status).toBe(404);
    // The owner's session is untouched.
    expect((await whoami(owner)).auth.keyName).toBe('ci-bot');
    await owner.close();
    await server.close();
  });

  it('rejects a key shorter than 16 characters at listen()', async () => {
    const server = guardedServer();
    await expect(
      server.listen({ auth: { type: 'apiKeys', keys: [{ name: 'x', key: 'short' }] } }),
    ).rejects.toMatchObject({
      code: CoreErrorCode.INVALID_OPTIONS,
    });
    await server.close();
  });
});

describe('checking a credential that came another way', () => {
  it('verifies an Authorization value as the listener would: the caller with its scopes, or false', async () => {
    const { server, listener } = await listen({
      type: 'apiKeys',
      keys: [{ name: 'ops', key: 'o'.repeat(40), scopes: ['admin'] }],
    });
    const verdict = await listener.authenticate(`Bearer ${'o'.repeat(40)}`);
    expect(verdict && identityOf(verdict)).toMatchObject({ method: 'apiKey', keyName: 'ops', scopes: ['admin'] });
    expect(verdict && verdict.token).toBe('[redacted]');
    for (const refused of [
      `Bearer ${'o'.repeat(39)}`,
      'o'.repeat(40),
      '',
      'Bearer \u00e9\u2028',
      `Bearer ${'o'.repeat(9_000)}`,
    ])
      expect(await listener.authenticate(refused)).toBe(false);
    await server.close();
  });

  it('applies the required scopes of OAuth, and answers undefined on a listener without authentication', async () => {
    const { server, listener } = await listen(oauth({ requiredScopes: ['write'] }));
    expect(await listener.authenticate(`Bearer ${await as.token(READER, listener.url.href)}`)).toBe(false);
    const writer = await listener.authenticate(`Bearer ${await as.token(WRITER, listener.url.href)}`);
    expect(writer && identityOf(writer)?.scopes).toEqual(['read', 'write']);
    await server.close();
    const open = guardedServer();
    expect(await (await open.listen()).authenticate('Bearer anything')).toBeUndefined();
    await open.close();
  });
});

describe('binding beyond loopback', () => {
  it('refuses to serve 0.0.0.0 without authentication, and says how to fix it', async () => {
    const server = guardedServer();
    const error = await server.listen({ host: '0.0.0.0' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: CoreErrorCode.INSECURE_LISTEN });
    expect((error as Error).message).toMatch(/Configure auth .*allowUnauthenticated: true/);
    await server.close();
  });

  it('serves 0.0.0.0 without authentication only when told to, and warns', async () => {
    const { logger, records } = captureLogger();
    const server = createServer({ name: 'open', version: '1.0.0', logger });
    await server.listen({ host: '0.0.0.0', allowUnauthenticated: true });
    expect(records.some((r) => r.event === 'http.unauthenticated' && r.level === 40)).toBe(true);
    await server.close();
  });
});

describe('the other routes on the listener', () => {
  it('guards extra routes with the listener authentication, except the public ones', async () => {
    const server = guardedServer();
    const ok = (_req: unknown, res: { end(text: string): void }) => res.end('scraped');
    const listener = await server.listen({
      auth: { type: 'apiKeys', keys: [{ name: 'scraper', key: 's'.repeat(24) }] },
      routes: { '/metrics': ok, '/healthz': ok },
      publicRoutes: ['/healthz'],
    });
    const metrics = new URL('/metrics', listener.url);
    expect((await fetch(metrics)).status).toBe(401);
    const scraped = await fetch(metrics, { headers: { authorization: `Bearer ${'s'.repeat(24)}` } });
    expect(await scraped.text()).toBe('scraped');
    expect((await fetch(new URL('/healthz', listener.url))).status).toBe(200);
    await server.close();
  });
});
