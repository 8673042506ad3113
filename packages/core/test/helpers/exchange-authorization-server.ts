// A real authorization server (oidc-provider) that also exchanges tokens
// (RFC 8693): a registered grant type checks the subject token it is given
// against its own keys and the gateway's audience, and issues a JWT for the
// requested resource with the subject kept and the gateway named in `act`.
// Every caller token names, in `may_act` (RFC 8693 section 4.4), the one
// client allowed to exchange it; an exchange by any other client is refused
// (`invalid_grant`).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify } from 'jose';
import type { JWK } from 'jose';
import Provider from 'oidc-provider';
import type { TokenEndpointGrantContext } from 'oidc-provider';

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface ExchangeClient {
  readonly id: string;
  readonly secret: string;
}

export const ALICE: ExchangeClient = { id: 'alice', secret: 'alice-secret-0123456789' };
export const BOB: ExchangeClient = { id: 'bob', secret: 'bob-secret-0123456789' };
export const GATEWAY: ExchangeClient = { id: 'gateway', secret: 'gateway-secret-0123456789' };
/** A caller whose tokens only another client (`OTHER_ACTOR`) may exchange. */
export const CAROL: ExchangeClient = { id: 'carol', secret: 'carol-secret-0123456789' };
export const OTHER_ACTOR = 'other-gateway';

/** The `may_act` subject of each caller's tokens: the one client that may exchange them. */
const MAY_ACT: Readonly<Record<string, string>> = {
  [ALICE.id]: GATEWAY.id,
  [BOB.id]: GATEWAY.id,
  [CAROL.id]: OTHER_ACTOR,
};

export interface ExchangeServer {
  readonly issuer: string;
  /** A client-credentials token for `resource`: its subject is the client. */
  token(client: ExchangeClient, resource: string): Promise<string>;
  /** Exchanges performed, by subject. */
  readonly exchanges: string[];
  /** Exchanges refused because the client asking is not the token's `may_act`, by subject. */
  readonly refusedActors: string[];
  /** Every subject token the server was asked to exchange. */
  readonly subjectTokens: string[];
  close(): Promise<void>;
}

const EXCHANGE_TTL_SEC = 300;

export async function startExchangeServer(options: { gatewayResource: () => string }): Promise<ExchangeServer> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const key: JWK = { ...(await exportJWK(privateKey)), kid: 'exchange-1', alg: 'ES256', use: 'sig' };
  const publicKey: JWK = { ...key };
  delete publicKey.d;
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const exchanges: string[] = [];
  const subjectTokens: string[] = [];
  const refusedActors: string[] = [];
  const provider = new Provider(issuer, {
    clients: [ALICE, BOB, CAROL, GATEWAY].map((c) => ({
      client_id: c.id,
      client_secret: c.secret,
      grant_types: c === GATEWAY ? ['client_credentials', TOKEN_EXCHANGE] : ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: 'read',
      id_token_signed_response_alg: 'ES256',
    })),
    scopes: ['read'],
    jwks: { keys: [key] },
    // A caller's client-credentials token names the one actor allowed to exchange it.
    extraTokenClaims: (_ctx, token) => {
      const clientId = 'clientId' in token ? token.clientId : undefined;
      const actor = typeof clientId === 'string' ? MAY_ACT[clientId] : undefined;
      return actor === undefined ? undefined : { may_act: { sub: actor } };
    },
    features: {
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: 'read',
          audience: resourceIndicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
      devInteractions: { enabled: false },
    },
  });
  provider.on('server_error', () => undefined);
  const keys = createLocalJWKSet({ keys: [publicKey] });
  const signer = await importJWK(key, 'ES256');
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx: TokenEndpointGrantContext<{ subject_token?: string; subject_token_type?: string }>) => {
      const { subject_token: subjectToken, subject_token_type: type, resource, scope } = ctx.oidc.params;
      const refuse = (error: string, description: string): void => {
        ctx.status = 400;
        ctx.body = { error, error_description: description };
      };
      if (!subjectToken || type !== ACCESS_TOKEN_TYPE) {
        refuse('invalid_request', 'subject_token missing');
        return;
      }
      if (typeof resource !== 'string') {
        refuse('invalid_target', 'one resource is required');
        return;
      }
      subjectTokens.push(subjectToken);
      let sub: string;
      let mayAct: unknown;
      try {
        // The subject token must be this server's, issued for the gateway.
        const { payload } = await jwtVerify(subjectToken, keys, { issuer, audience: options.gatewayResource() });
        sub = String(payload.sub);
        mayAct = payload.may_act;
      } catch {
        refuse('invalid_grant', 'the subject token is not valid here');
        return;
      }
      // The actor is the client authenticated here; the token must name it.
      const allowed = typeof mayAct === 'object' && mayAct !== null ? (mayAct as { sub?: unknown }).sub : undefined;
      if (allowed !== ctx.oidc.client.clientId) {
        refusedActors.push(sub);
        refuse('invalid_grant', `client ${ctx.oidc.client.clientId} may not act for the subject of this token`);
        return;
      }
      exchanges.push(sub);
      const now = Math.floor(Date.now() / 1000);
      const accessToken = await new SignJWT({
        client_id: ctx.oidc.client.clientId,
        scope: scope ?? 'read',
        act: { sub: ctx.oidc.client.clientId },
      })
        .setProtectedHeader({ alg: 'ES256', kid: key.kid!, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setSubject(sub)
        .setAudience(resource)
        .setIssuedAt(now)
        .setExpirationTime(now + EXCHANGE_TTL_SEC)
        .setJti(randomUUID())
        .sign(signer);
      ctx.body = {
        access_token: accessToken,
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: EXCHANGE_TTL_SEC,
      };
    },
    ['subject_token', 'subject_token_type', 'resource', 'scope', 'audience', 'requested_token_type'],
  );
  server.on('request', (req, res) => void provider.callback()(req, res));
  return {
    issuer,
    exchanges,
    refusedActors,
    subjectTokens,
    async token(client, resource) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read', resource }).toString(),
      });
      const body = (await response.json()) as { access_token?: string };
      if (!body.access_token) throw new Error(`token request failed: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
