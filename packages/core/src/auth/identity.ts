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
 * The AuthInfo handed to the SDK and to every hook. The raw token is replaced
 * so that no plugin or upstream proxy can pass the caller's credential on.
 */
export function authInfoFor(identity: CallerIdentity, expiresAt: number | undefined, resource?: URL): AuthInfo {
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
