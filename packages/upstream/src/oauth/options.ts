import { z } from 'zod';

const HttpsOrLoopbackUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' });

/** The gateway's client at the upstream's authorization server, and where that server is. */
const clientFields = {
  clientId: z.string().min(1).max(1_024).describe("The gateway's client id at the authorization server."),
  clientSecret: z
    .string()
    .min(1)
    .max(4_096)
    .describe("The gateway's client secret (use `${VAR}`); sent only to the token endpoint."),
  /** How the secret reaches the token endpoint. Default `client_secret_basic`. */
  tokenEndpointAuthMethod: z
    .enum(['client_secret_basic', 'client_secret_post'])
    .default('client_secret_basic')
    .describe('How the secret reaches the token endpoint. Default `client_secret_basic`.'),
  scope: z.string().min(1).max(1_024).optional().describe('The scope to ask for (space-separated).'),
  /** The resource indicator (RFC 8707). Default: the `resource` of the upstream's protected-resource metadata, else its URL. */
  resource: HttpsOrLoopbackUrl.optional().describe(
    "The resource indicator (RFC 8707). Default: the `resource` of the upstream's protected-resource metadata, else its URL.",
  ),
  /**
   * The authorization server to trust. When set, the upstream's metadata must name it; when unset, the first
   * one the upstream names is used. Set it: the client secret goes to whichever server this is.
   */
  issuer: HttpsOrLoopbackUrl.optional().describe(
    'The authorization server to trust; when set, the upstream must name it. Set it: the client secret goes to this server.',
  ),
  /** Skips discovery: tokens come from this endpoint. */
  tokenEndpoint: HttpsOrLoopbackUrl.optional().describe('Skips discovery: tokens come from this endpoint.'),
  /** A token is replaced this long before it expires, in seconds (at most half its lifetime). Default 60. */
  refreshBeforeExpirySec: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(60)
    .describe('A token is replaced this long before it expires, in seconds (at most half its lifetime). Default 60.'),
  /** Limit for each discovery and token request, in ms. Default 10 000. */
  timeoutMs: z
    .number()
    .int()
    .positive()
    .max(120_000)
    .default(10_000)
    .describe('Limit for each discovery and token request, in ms. Default 10 000.'),
};

/** How many callers an upstream keeps grants or connections for at once. Default 10 000. */
const maxCallers = (what: string) =>
  z.number().int().positive().max(1_000_000).default(10_000).describe(`${what} Default 10 000.`);

/**
 * The gateway's own OAuth client at the upstream's authorization server: the
 * client-credentials grant, with the authorization server found through the
 * upstream's protected-resource metadata unless `issuer` or `tokenEndpoint` say where it is.
 */
export const ClientCredentialsAuthSchema = z
  .object({
    type: z.literal('client_credentials').describe("The gateway's own OAuth client (client-credentials grant)."),
    ...clientFields,
  })
  .strict();

/**
 * Each caller's verified token exchanged (RFC 8693) at the authorization
 * server for one whose audience is the upstream, per caller, cached until
 * shortly before it expires. The caller's own token goes only to the token
 * endpoint. The connection itself (handshake, lists) uses the gateway's
 * client-credentials token from the same client.
 */
export const TokenExchangeAuthSchema = z
  .object({
    type: z
      .literal('token_exchange')
      .describe("Each caller's token exchanged (RFC 8693) for one bound to the upstream; lists use the gateway's own."),
    ...clientFields,
    /** The `audience` parameter of the exchange, when the authorization server wants one beside `resource`. */
    audience: z
      .string()
      .min(1)
      .max(1_024)
      .optional()
      .describe('The `audience` parameter of the exchange, when the authorization server wants one beside `resource`.'),
    /** Callers whose tokens are exchanged at once, at most; past it, the least recently used are forgotten. */
    maxCallers: maxCallers('Exchanged tokens kept at once (one per caller); past it, the least recently used go.'),
  })
  .strict();

/**
 * Each caller connects their own account at the upstream once: a caller
 * without a grant is sent (URL-mode elicitation) to the gateway's consent
 * page, which runs the authorization-code flow with PKCE against the
 * upstream's authorization server; the grant is sealed in the server's
 * credential vault under that caller and refreshed with its refresh token.
 * The connection itself (handshake, lists) uses the gateway's
 * client-credentials token from the same client.
 */
export const PerUserAuthSchema = z
  .object({
    type: z
      .literal('per_user')
      .describe("Each caller connects their own account once (consent page, PKCE); lists use the gateway's own."),
    ...clientFields,
    /** Skips discovery of the authorization endpoint (with `tokenEndpoint`, of the whole server). */
    authorizationEndpoint: HttpsOrLoopbackUrl.optional().describe(
      'Where people sign in and consent; skips its discovery (with `tokenEndpoint`, discovery is skipped).',
    ),
    /**
     * The gateway's callback as browsers reach it, registered at the authorization server. Default: the
     * listener's origin + `/oauth/upstream/callback`; set it behind a proxy or load balancer.
     */
    redirectUri: HttpsOrLoopbackUrl.optional().describe(
      "The callback as browsers reach it (register it at the authorization server). Default: the listener's origin + `/oauth/upstream/callback`.",
    ),
    /** How long a consent link and a started sign-in stay valid, in seconds. Default 600. */
    consentTtlSec: z
      .number()
      .int()
      .min(30)
      .max(3_600)
      .default(600)
      .describe('How long a consent link and a started sign-in stay valid, in seconds. Default 600.'),
    /** Per-caller connections kept open at once; past it, the least recently used are closed. */
    maxCallers: maxCallers('Per-caller connections kept open at once; past it, the least recently used close.'),
  })
  .strict();

/** How Sluice authenticates to an HTTP upstream. */
export const UpstreamAuthSchema = z.discriminatedUnion('type', [
  ClientCredentialsAuthSchema,
  TokenExchangeAuthSchema,
  PerUserAuthSchema,
]);

export type UpstreamAuth = z.input<typeof UpstreamAuthSchema>;
export type ResolvedUpstreamAuth = z.output<typeof UpstreamAuthSchema>;
export type ResolvedClientCredentials = z.output<typeof ClientCredentialsAuthSchema>;
export type ResolvedTokenExchange = z.output<typeof TokenExchangeAuthSchema>;
export type ResolvedPerUser = z.output<typeof PerUserAuthSchema>;
