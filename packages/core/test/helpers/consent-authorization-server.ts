// A real authorization server (oidc-provider) for per-user grants: the
// gateway is a confidential client with the authorization-code grant (PKCE
// required), refresh tokens and client credentials; people sign in and
// consent on oidc-provider's own interaction pages, and access tokens are
// JWTs bound to the resource asked for. The provider is built once the
// gateway's redirect URI is known (its port is chosen at listen time).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';
import Provider from 'oidc-provider';

export const CONSENT_GATEWAY = { id: 'gateway', secret: 'gateway-secret-0123456789' } as const;

/** The `per_user` auth of an upstream whose authorization server is `issuer`, for the gateway client above. */
export function perUserAuth(issuer: string, resource: string, redirectUri?: string) {
  return {
    type: 'per_user' as const,
    clientId: CONSENT_GATEWAY.id,
    clientSecret: CONSENT_GATEWAY.secret,
    issuer,
    resource,
    scope: 'read offline_access',
    ...(redirectUri === undefined ? {} : { redirectUri }),
  };
}

export interface ConsentServer {
  readonly issuer: string;
  /** Builds the provider with the gateway's redirect URI; call before any browser reaches it. */
  register(redirectUri: string): void;
  /** The grant type of every token the server issued, in order (`authorization_code`, `refresh_token`, ...). */
  readonly grants: string[];
  close(): Promise<void>;
}

export async function startConsentServer(options: { accessTokenTtlSec?: number } = {}): Promise<ConsentServer> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const key: JWK = { ...(await exportJWK(privateKey)), kid: 'consent-1', alg: 'ES256', use: 'sig' };
  let provider: Provider | undefined;
  const grants: string[] = [];
  const server = http.createServer((req, res) => {
    if (provider === undefined) {
      res.writeHead(503).end();
      return;
    }
    void provider.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const build = (redirectUri: string): void => {
    provider = new Provider(issuer, {
      clients: [
        {
          client_id: CONSENT_GATEWAY.id,
          client_secret: CONSENT_GATEWAY.secret,
          grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
          redirect_uris: [redirectUri],
          response_types: ['code'],
          scope: 'read offline_access',
          id_token_signed_response_alg: 'ES256',
        },
      ],
      scopes: ['read', 'offline_access'],
      jwks: { keys: [key] },
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      features: {
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resourceIndicator) => ({
            scope: 'read',
            audience: resourceIndicator,
            accessTokenTTL: options.accessTokenTtlSec ?? 300,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          }),
        },
        // oidc-provider's own sign-in and consent pages: any login, any password.
        devInteractions: { enabled: true },
      },
    });
    provider.on('server_error', () => undefined);
    provider.on('grant.success', (ctx) => {
      grants.push(String(ctx.oidc.params?.grant_type));
    });
  };
  // Until the gateway's port is known, a provider with a placeholder callback answers discovery.
  build(`${issuer}/placeholder-callback`);
  return {
    issuer,
    register: build,
    grants,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
