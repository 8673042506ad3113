import type { AuthInfo } from '../protocol.js';

/** Who is calling, as the listener verified it. Carries no credential. */
export interface CallerIdentity {
  /** How the caller proved who they are. */
  readonly method: 'oauth' | 'apiKey';
  /** The token's `sub`, or the API key's name. */
  readonly subject: string;
  /** The OAuth client (`client_id`/`azp`), or the API key's name. */
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** The API key's name, for `apiKey` callers. */
  readonly keyName?: string;
  /** The token's verified claims (OAuth only), frozen. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

const IDENTITY = 'dev.sluice/identity';

/**
 * The verified token behind each OAuth identity, for the one use the spec
 * allows: exchanging it at the authorization server (RFC 8693). Kept out of
 * every object a plugin or upstream can read.
 */
const SUBJECT_TOKENS = new WeakMap<CallerIdentity, string>();

/** The verified token of an OAuth caller, for a token exchange; never to be sent anywhere else. */
export function subjectTokenOf(identity: CallerIdentity): string | undefined {
  return SUBJECT_TOKENS.get(identity);
}

/**
 * The AuthInfo handed to the SDK and to every hook. The raw token is replaced
 * so that no plugin or upstream proxy can pass the caller's credential on.
 */
export function authInfoFor(
  identity: CallerIdentity,
  expiresAt: number | undefined,
  resource?: URL,
  token?: string,
): AuthInfo {
  if (token !== undefined) SUBJECT_TOKENS.set(identity, token);
  return {
    token: '[redacted]',
    clientId: identity.clientId,
    scopes: [...identity.scopes],
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(resource ? { resource } : {}),
    extra: { [IDENTITY]: identity },
  };
}

/** The verified identity an AuthInfo carries, if the listener authenticated it. */
export function identityOf(authInfo: AuthInfo | undefined): CallerIdentity | undefined {
  const value = authInfo?.extra?.[IDENTITY];
  return value && typeof value === 'object' ? (value as CallerIdentity) : undefined;
}

/**
 * Who a caller is, as one string, for per-caller shares and for binding what
 * a caller left to that caller: `apiKey:<key name>` or `oauth:<subject>` for
 * a caller this listener verified (never the OAuth client, which every user of
 * one app shares); for an `AuthInfo` another verifier made (an adopted
 * server's own auth), its client and `extra.sub`; undefined without one.
 */
export function callerKeyOf(authInfo: AuthInfo | undefined): string | undefined {
  if (authInfo === undefined) return undefined;
  const identity = identityOf(authInfo);
  if (identity !== undefined)
    return `${identity.method}:${identity.method === 'apiKey' ? (identity.keyName ?? identity.subject) : identity.subject}`;
  const subject = (authInfo.extra as { sub?: unknown } | undefined)?.sub;
  return `auth:${authInfo.clientId}${typeof subject === 'string' ? `:${subject}` : ''}`;
}
