import { SluiceError } from '@sluice/core';
import type { CredentialSlot } from '@sluice/core';
import type { CredentialVault } from '@sluice/upstream';
import { GatewayErrorCode } from '../errors.js';
import type { AdminContext } from './admin-surface.js';
import { HttpProblem, stringField } from './http-io.js';

/** Longest upstream name or subject a filter may name. */
const MAX_NAME_CHARS = 256;

/** Which grants a request names: an upstream, a caller, or both (one grant). */
export type SlotFilter = Partial<CredentialSlot>;

/** The vault, or a 409 saying what the config lacks. */
export function requireVault(context: AdminContext): CredentialVault {
  const vault = context.credentials();
  if (vault === undefined)
    throw new SluiceError(
      GatewayErrorCode.NO_VAULT,
      'The gateway has no credential vault: configure credentialVault (per_user upstreams need it)',
    );
  return vault;
}

/** The `upstream` and `subject` of a request's fields or query; `required` refuses a filter that names neither. */
export function slotFilterOf(fields: Record<string, unknown>, required: boolean): SlotFilter {
  const filter: { upstream?: string; subject?: string } = {};
  for (const name of ['upstream', 'subject'] as const) {
    const value = stringField(fields, name);
    if (value === undefined || value === '') continue;
    if (value.length > MAX_NAME_CHARS) throw new HttpProblem(400, `"${name}" is longer than ${MAX_NAME_CHARS}`);
    filter[name] = value;
  }
  if (required && filter.upstream === undefined && filter.subject === undefined)
    throw new HttpProblem(400, 'name the grants to revoke by "upstream", "subject" (the caller), or both');
  return filter;
}

/** Revokes the grants a filter names, logging who did; resolves with how many went. */
export async function revokeGrants(context: AdminContext, filter: SlotFilter, operator: string): Promise<number> {
  const revoked = await requireVault(context).revoke(filter);
  context.logger.info(
    { event: 'admin.credentials_revoked', ...filter, revoked, by: operator },
    `${revoked} upstream grant(s) revoked by ${operator}`,
  );
  return revoked;
}

/** The console's table of grants: who is connected where, never what they hold, each with its revoke button. */
export function credentialsSection(
  slots: readonly CredentialSlot[],
  action: string,
  hidden: (slot: SlotFilter) => string,
  esc: (text: string) => string,
): string {
  if (slots.length === 0) return '<p class="muted">No caller has connected an upstream account.</p>';
  const rows = slots.map(
    (s) =>
      `<tr data-credential="${esc(`${s.upstream}/${s.subject}`)}"><td>${esc(s.upstream)}</td><td>${esc(s.subject)}</td>
<td><form class="inline" method="post" action="${esc(action)}">${hidden(s)}<button class="revoke">Revoke</button></form>
<form class="inline" method="post" action="${esc(action)}">${hidden({ subject: s.subject })}<button class="revoke">Revoke all of this caller</button></form></td></tr>`,
  );
  return `<table><thead><tr><th>upstream</th><th>caller</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}
