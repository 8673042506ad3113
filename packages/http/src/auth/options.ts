import { z } from 'zod';

const Url = z.url();
/** Signature algorithms accepted by default: asymmetric only, never `none` or HMAC. */
export const DEFAULT_JWT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
const Algorithm = z.enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']);

/** A named static key. Names reach logs and `ctx.auth`; keys never do. */
const ApiKey = z.object({
  name: z.string().min(1).max(64).describe('Shown in logs, metrics and ctx.auth as the caller.'),
  key: z
    .string()
    .min(16, 'an API key must have at least 16 characters')
    .max(4096)
    .describe('The secret a caller sends as `Authorization: Bearer <key>`; at least 16 characters (use `${VAR}`).'),
  scopes: z
    .array(z.string().min(1).max(128))
    .max(64)
    .default([])
    .describe("The scopes a call with this key carries, as a token's would."),
});

export const ApiKeysAuth = z.object({
  type: z.literal('apiKeys').describe('Callers send one of these static keys as a bearer token.'),
  keys: z.array(ApiKey).min(1).max(1000).describe('The keys that may call, each with a name and its scopes.'),
});

export const OAuthAuth = z.object({
  type: z.literal('oauth').describe('Callers send bearer tokens from your authorization server.'),
  /** The authorization servers this resource trusts, advertised in the metadata. */
  authorizationServers: z
    .array(Url)
    .min(1)
    .max(8)
    .describe('The authorization servers this resource trusts, advertised in the metadata.'),
  /** The tokens' `iss`. Default: the first authorization server. */
  issuer: Url.optional().describe("The tokens' `iss`. Default: the first authorization server."),
  /** Where the signing keys are. Default: discovered from the issuer's metadata. */
  jwksUri: Url.optional().describe("Where the signing keys are. Default: discovered from the issuer's metadata."),
  /**
   * This server's canonical resource URI (RFC 8707): the `aud` tokens must
   * carry. Default: the listener's MCP URL.
   */
  resource: Url.optional().describe(
    "This server's canonical resource URI (RFC 8707): the `aud` tokens must carry. Default: the listener's MCP URL.",
  ),
  algorithms: z
    .array(Algorithm)
    .min(1)
    .default([...DEFAULT_JWT_ALGORITHMS])
    .describe('The JWT signature algorithms accepted; asymmetric only (default RS256, PS256, ES256, EdDSA).'),
  clockToleranceSec: z
    .number()
    .int()
    .min(0)
    .max(300)
    .default(30)
    .describe("Leeway for the tokens' `exp` and `nbf` against this server's clock, in seconds."),
  /** A token naming an unknown key refetches the key set at most this often. */
  jwksRefreshCooldownSec: z
    .number()
    .int()
    .min(0)
    .max(3600)
    .default(30)
    .describe('A token naming an unknown key refetches the key set at most this often.'),
  /** Scopes every request needs; a token without them gets 403 insufficient_scope. */
  requiredScopes: z
    .array(z.string().min(1))
    .max(64)
    .default([])
    .describe('Scopes every request needs; a token without them gets 403 insufficient_scope.'),
  /** Advertised in the metadata. Default: the required scopes. */
  scopesSupported: z
    .array(z.string().min(1))
    .max(256)
    .optional()
    .describe('Advertised in the metadata. Default: the required scopes.'),
  /** RFC 7662 introspection for opaque tokens (tokens that are not JWTs). */
  introspection: z
    .object({
      endpoint: Url.describe('The introspection endpoint of the authorization server.'),
      clientId: z.string().min(1).describe('The client ID this server introspects with.'),
      clientSecret: z.string().min(1).describe('Its client secret (use `${VAR}`).'),
    })
    .strict()
    .optional()
    .describe('RFC 7662 introspection for opaque tokens (tokens that are not JWTs).'),
});

export const NoAuth = z.object({
  type: z.literal('none').describe('No authentication: loopback binds only, unless `allowUnauthenticated`.'),
});

/** How the HTTP listener authenticates callers. */
export const ListenerAuthOptions = z.discriminatedUnion('type', [
  OAuthAuth.strict(),
  ApiKeysAuth.strict(),
  NoAuth.strict(),
]);
export type ListenerAuthOptions = z.input<typeof ListenerAuthOptions>;
export type ListenerAuth = z.output<typeof ListenerAuthOptions>;
export type OAuthSettings = z.output<typeof OAuthAuth>;
export type ApiKeySettings = z.output<typeof ApiKeysAuth>;
