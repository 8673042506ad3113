// A real OAuth 2.1 / OpenID authorization server for the tests: the certified
// oidc-provider package on a loopback port, issuing JWT access tokens for a
// resource indicator (RFC 8707) through the client-credentials grant.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';
import Provider from 'oidc-provider';

export interface TestClient {
  readonly id: string;
  readonly secret: string;
  readonly scope: string;
}

export interface AuthorizationServer {
  readonly issuer: string;
  /** A client-credentials token for `resource` with the given scope. */
  token(client: TestClient, resource: string, scope?: string): Promise<string>;
  /** The private signing key in use, for tests that forge tokens deliberately. */
  readonly signingKey: JWK;
  /** Replaces the signing key (the old one leaves the published key set). */
  rotateKeys(): Promise<void>;
  close(): Promise<void>;
}

export const READER: TestClient = { id: 'reader', secret: 'reader-secret-0123456789', scope: 'read' };
export const WRITER: TestClient = { id: 'writer', secret: 'writer-secret-0123456789', scope: 'read write' };

async function signingJwk(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' };
}

function provider(issuer: string, key: JWK): Provider {
  const instance = new Provider(issuer, {
    clients: [READER, WRITER].map((c) => ({
      client_id: c.id,
      client_secret: c.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: c.scope,
      id_token_signed_response_alg: 'ES256',
    })),
    scopes: ['read', 'write'],
    jwks: { keys: [key] },
    features: {
      clientCredentials: { enabled: true },
      // Any registered client may introspect: the resource server authenticates as one.
      introspection: { enabled: true, allowedPolicy: () => true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: 'read write',
          audience: resourceIndicator,
          accessTokenTTL: 300,
          // A resource whose URI says "opaque" gets opaque tokens, to exercise introspection.
          accessTokenFormat: resourceIndicator.includes('opaque') ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
      devInteractions: { enabled: false },
    },
  });
  instance.on('server_error', () => undefined);
  return instance;
}

export async function startAuthorizationServer(): Promise<AuthorizationServer> {
  let current: Provider | undefined;
  const server = http.createServer((req, res) => void current?.callback()(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let generation = 1;
  let key = await signingJwk(`key-${generation}`);
  current = provider(issuer, key);
  return {
    issuer,
    get signingKey() {
      return key;
    },
    async token(client, resource, scope = client.scope) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }).toString(),
      });
      const body = (await response.json()) as { access_token?: string; error?: string };
      if (!body.access_token) throw new Error(`token request failed: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async rotateKeys() {
      generation += 1;
      key = await signingJwk(`key-${generation}`);
      current = provider(issuer, key);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
