import type { Writable } from 'node:stream';
import type { CredentialSlot } from '@sluice/core';
import { AdminClient } from './admin/client.js';
import type { GatewayConfig } from './config-schema.js';
import { adminUrl } from './ledger-command.js';
import { textTable } from './text-table.js';

export type CredentialsAction = 'list' | 'revoke' | 'rotate';

export interface CredentialsCommand {
  readonly action: CredentialsAction;
  /** Only this upstream's grants (`list`, `revoke`). */
  readonly upstream?: string;
  /** Only this caller's grants (`list`, `revoke`). */
  readonly subject?: string;
  /** The gateway's address; default: the config's `listen.http`. */
  readonly url?: string;
  readonly json: boolean;
}

/**
 * `sluice credentials`: the running gateway's vault of upstream grants
 * through its admin API, so that a revocation takes effect at once in that
 * gateway (and, with a Redis store, on every replica). Lists name who is
 * connected where, never a token. The key comes from `SLUICE_ADMIN_KEY`.
 */
export async function runCredentialsCommand(
  command: CredentialsCommand,
  config: GatewayConfig,
  key: string | undefined,
  out: Writable,
): Promise<void> {
  const client = new AdminClient(adminUrl(command.url, config), key);
  const print = (value: unknown, text: string) =>
    out.write(command.json ? `${JSON.stringify(value, null, 2)}\n` : text);
  const filter = {
    ...(command.upstream === undefined ? {} : { upstream: command.upstream }),
    ...(command.subject === undefined ? {} : { subject: command.subject }),
  };
  switch (command.action) {
    case 'list': {
      const slots = await client.credentials(filter);
      print({ credentials: slots }, formatSlots(slots));
      return;
    }
    case 'revoke': {
      const revoked = await client.revokeCredentials(filter);
      print({ revoked }, `revoked ${revoked} grant(s)\n`);
      return;
    }
    case 'rotate': {
      const resealed = await client.rotateCredentials();
      print({ resealed }, `resealed ${resealed} grant(s) with the first vault key\n`);
      return;
    }
  }
}

function formatSlots(slots: readonly CredentialSlot[]): string {
  if (slots.length === 0) return 'no grants\n';
  return `${textTable([['upstream', 'caller'], ...slots.map((s) => [s.upstream, s.subject])]).join('\n')}\n`;
}
