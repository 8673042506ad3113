import { identityOf } from '@sluice/core';
import type { AuthInfo } from '@sluice/core';
import { HttpProblem } from './http-io.js';

/** Who an unauthenticated listener's operator is, in the ledger's record. */
export const UNAUTHENTICATED_OPERATOR = 'unauthenticated';

/**
 * The operator behind an admin request, as the listener verified them: the
 * API key's name or the token's subject. With `scopes`, a verified caller
 * without every one of them is refused (403), so that holding an MCP key is
 * not enough to approve tools.
 */
export function operatorOf(auth: AuthInfo | undefined, scopes: readonly string[]): string {
  const identity = identityOf(auth);
  if (identity === undefined) return UNAUTHENTICATED_OPERATOR;
  const missing = scopes.filter((scope) => !identity.scopes.includes(scope));
  if (missing.length > 0) throw new HttpProblem(403, `the admin surface needs the scope ${missing.join(', ')}`);
  return identity.method === 'apiKey' ? `key:${identity.keyName ?? identity.subject}` : identity.subject;
}
