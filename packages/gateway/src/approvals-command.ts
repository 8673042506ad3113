import type { Writable } from 'node:stream';
import { AdminClient } from './admin/client.js';
import type { GatewayConfig } from './config-schema.js';
import { adminUrl } from './ledger-command.js';
import { textTable } from './text-table.js';
import type { PendingApproval } from '@sluice/plugin-risk';

export type ApprovalsAction = 'list' | 'approve' | 'deny';

export interface ApprovalsCommand {
  readonly action: ApprovalsAction;
  /** The question's id, as `list` shows it (approve, deny). */
  readonly id?: string;
  /** Why: required to deny (the caller reads it), optional to approve. */
  readonly reason?: string;
  /** The gateway's address; default: the config's `listen.http`. */
  readonly url?: string;
  readonly json: boolean;
}

/**
 * `sluice approvals`: the calls waiting for a person, through the running
 * gateway's admin API (with a Redis store: every replica's operator
 * questions), and an operator's answer to one of them, recorded as given
 * through `cli` by the key's operator. The key comes from `SLUICE_ADMIN_KEY`.
 */
export async function runApprovalsCommand(
  command: ApprovalsCommand,
  config: GatewayConfig,
  key: string | undefined,
  out: Writable,
): Promise<void> {
  const client = new AdminClient(adminUrl(command.url, config), key);
  const print = (value: unknown, text: string) =>
    out.write(command.json ? `${JSON.stringify(value, null, 2)}\n` : text);
  if (command.action === 'list') {
    const approvals = await client.approvals();
    print({ approvals }, formatApprovals(approvals));
    return;
  }
  const answered = await client.answer(
    command.action === 'approve' ? 'approved' : 'denied',
    command.id ?? '',
    command.reason,
  );
  print(answered, `${answered.decision} ${answered.id}, as ${answered.by}\n`);
}

export function formatApprovals(approvals: readonly PendingApproval[]): string {
  if (approvals.length === 0) return 'No call waits for a person.\n';
  const rows = approvals.map((a) => [
    a.id,
    a.tool,
    a.level,
    a.caller ?? '-',
    a.via === 'operator' ? 'operator' : `client (${a.via})`,
    new Date(a.expiresAt).toISOString(),
    a.message ?? '',
  ]);
  return `${textTable([['id', 'tool', 'risk', 'caller', 'answered by', 'lapses', 'question'], ...rows]).join('\n')}\n`;
}
