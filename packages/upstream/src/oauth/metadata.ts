import { fetchJsonBounded } from '@sluice/core/internal';
import { messageOf } from '@sluice/core';
import { UpstreamAuthError } from './errors.js';

/** Where tokens for one upstream come from, as discovery found it. */
export interface AuthorizationTarget {
  /** The resource indicator to ask tokens for. */
  readonly resource: string;
  readonly issuer: string | undefined;
  readonly tokenEndpoint: string;
  /** Where people are sent to sign in and consent (`per_user`), when known. */
  readonly authorizationEndpoint?: string | undefined;
  /** The server sends `iss` with its authorization responses (RFC 9207), so a response without it is refused. */
  readonly issuerInResponses?: boolean;
}

export interface DiscoveryOptions {
  readonly upstream: string;
  /** The upstream's MCP endpoint. */
  readonly url: URL;
  readonly resource?: string | undefined;
  readonly issuer?: string | undefined;
  readonly tokenEndpoint?: string | undefined;
  readonly authorizationEndpoint?: string | undefined;
}

const PROTECTED_RESOURCE = '/.well-known/oauth-protected-resource';

/**
 * The MCP authorization flow, client side: the upstream's protected-resource
 * metadata (RFC 9728) names its authorization servers; the chosen one's
 * metadata (RFC 8414, or OpenID discovery) names its token endpoint.
 * Configured values skip the steps they make unnecessary.
 */
export async function discoverAuthorization(options: DiscoveryOptions): Promise<AuthorizationTarget> {
  if (options.tokenEndpoint !== undefined)
    return {
      resource: options.resource ?? options.url.href,
      issuer: options.issuer,
      tokenEndpoint: options.tokenEndpoint,
      authorizationEndpoint: options.authorizationEndpoint,
    };
  const resourceMetadata = options.issuer === undefined || options.resource === undefined;
  const described = resourceMetadata ? await protectedResource(options) : undefined;
  const issuer = chooseIssuer(options, described?.authorizationServers ?? []);
  const endpoints = await endpointsOf(options.upstream, issuer);
  return {
    resource: options.resource ?? described?.resource ?? options.url.href,
    issuer,
    ...endpoints,
    authorizationEndpoint: options.authorizationEndpoint ?? endpoints.authorizationEndpoint,
  };
}

interface ProtectedResource {
  readonly resource: string | undefined;
  readonly authorizationServers: readonly string[];
}

async function protectedResource(options: DiscoveryOptions): Promise<ProtectedResource> {
  const { url, upstream } = options;
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const candidates = [
    ...(path ? [`${url.origin}${PROTECTED_RESOURCE}${path}`] : []),
    `${url.origin}${PROTECTED_RESOURCE}`,
  ];
  const body = await firstAnswer(candidates);
  if (body === undefined) {
    if (options.issuer !== undefined) return { resource: undefined, authorizationServers: [] };
    throw new UpstreamAuthError(
      upstream,
      `Upstream "${upstream}" publishes no protected-resource metadata at ${candidates.join(' or ')}`,
      'Set `auth.issuer` (or `auth.tokenEndpoint`) in its configuration.',
    );
  }
  const resource = typeof body.resource === 'string' ? body.resource : undefined;
  // A resource may only speak for its own origin (RFC 9728 section 3.3).
  if (resource !== undefined && !sameOrigin(resource, url))
    throw new UpstreamAuthError(
      upstream,
      `Upstream "${upstream}" names a resource on another origin in its protected-resource metadata`,
      'Set `auth.resource` in its configuration if that is intended.',
    );
  const servers = Array.isArray(body.authorization_servers)
    ? body.authorization_servers.filter((s): s is string => typeof s === 'string' && isHttpUrl(s)).slice(0, 16)
    : [];
  return { resource, authorizationServers: servers };
}

function chooseIssuer(options: DiscoveryOptions, named: readonly string[]): string {
  const { upstream, issuer } = options;
  if (issuer !== undefined) {
    if (named.length === 0 || named.some((s) => sameIssuer(s, issuer))) return issuer;
    throw new UpstreamAuthError(
      upstream,
      `Upstream "${upstream}" does not name the configured authorization server ${issuer}`,
      "Check `auth.issuer` against the upstream's protected-resource metadata.",
    );
  }
  const first = named[0];
  if (first !== undefined) return first;
  throw new UpstreamAuthError(
    upstream,
    `Upstream "${upstream}" names no authorization server in its protected-resource metadata`,
    'Set `auth.issuer` (or `auth.tokenEndpoint`) in its configuration.',
  );
}

type Endpoints = Pick<AuthorizationTarget, 'tokenEndpoint' | 'authorizationEndpoint' | 'issuerInResponses'>;

async function endpointsOf(upstream: string, issuer: string): Promise<Endpoints> {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    ...(path ? [`${url.origin}${path}/.well-known/openid-configuration`] : []),
  ];
  const body = await firstAnswer(candidates);
  if (body === undefined)
    throw new UpstreamAuthError(
      upstream,
      `The authorization server ${issuer} of upstream "${upstream}" publishes no metadata`,
      'Check that it is reachable, or set `auth.tokenEndpoint`.',
    );
  // The metadata must be the issuer's own (RFC 8414 section 3.3).
  if (typeof body.issuer !== 'string' || !sameIssuer(body.issuer, issuer))
    throw new UpstreamAuthError(
      upstream,
      `The metadata of authorization server ${issuer} (upstream "${upstream}") names another issuer`,
      'Check `auth.issuer`.',
    );
  if (typeof body.token_endpoint !== 'string' || !isHttpUrl(body.token_endpoint))
    throw new UpstreamAuthError(
      upstream,
      `The authorization server ${issuer} of upstream "${upstream}" names no token endpoint`,
      'Set `auth.tokenEndpoint`.',
    );
  const authorization = body.authorization_endpoint;
  // PKCE with S256 is required of every authorization-code flow; a server that lists methods must list it.
  const methods = body.code_challenge_methods_supported;
  const s256 = !Array.isArray(methods) || methods.includes('S256');
  return {
    tokenEndpoint: body.token_endpoint,
    authorizationEndpoint:
      typeof authorization === 'string' && isHttpUrl(authorization) && s256 ? authorization : undefined,
    issuerInResponses: body.authorization_response_iss_parameter_supported === true,
  };
}

/** The first candidate that answers with a JSON object; undefined when none does. */
async function firstAnswer(candidates: readonly string[]): Promise<Record<string, unknown> | undefined> {
  let lastError: Error | undefined;
  for (const candidate of candidates) {
    try {
      const body = await fetchJsonBounded(candidate, { headers: { accept: 'application/json' } });
      if (body !== null && typeof body === 'object' && !Array.isArray(body)) return body as Record<string, unknown>;
    } catch (error) {
      lastError = error instanceof Error ? error : new Error(messageOf(error));
    }
  }
  if (lastError !== undefined && !/answered 4\d\d$/.test(messageOf(lastError))) throw lastError;
  return undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

function sameOrigin(value: string, url: URL): boolean {
  try {
    return new URL(value).origin === url.origin;
  } catch {
    return false;
  }
}

const sameIssuer = (a: string, b: string): boolean => a.replace(/\/$/, '') === b.replace(/\/$/, '');
