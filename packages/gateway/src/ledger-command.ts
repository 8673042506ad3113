import type { Writable } from 'node:stream';
import { AdminClient } from './admin/client.js';
import type { LedgerDiff, LedgerRow } from './admin/ledger-view.js';
import type { GatewayConfig } from './config-schema.js';
import { GatewayErrorCode, configError } from './errors.js';
import { textTable } from './text-table.js';

export type LedgerAction = 'list' | 'diff' | 'approve' | 'revoke';

export interface LedgerCommand {
  readonly action: LedgerAction;
  /** The tool, as clients see it or as `<upstream>/<tool>` (all but `list`). */
  readonly tool?: string;
  /** The gateway's address; default: the config's `listen.http`. */
  readonly url?: string;
  readonly json: boolean;
}

/**
 * `sluice ledger`: the running gateway's ledger through its admin API, so a
 * decision takes effect in that gateway (and, with a Redis store, on every
 * replica) as a click in the console does. The key comes from
 * `SLUICE_ADMIN_KEY`, never from the command line, where `ps` would show it.
 */
export async function runLedgerCommand(
  command: LedgerCommand,
  config: GatewayConfig,
  key: string | undefined,
  out: Writable,
): Promise<void> {
  const client = new AdminClient(adminUrl(command.url, config), key);
  const print = (value: unknown, text: string) =>
    out.write(command.json ? `${JSON.stringify(value, null, 2)}\n` : text);
  if (command.action === 'list') {
    const rows = await client.list();
    print({ tools: rows }, formatRows(rows));
    return;
  }
  const row = await client.find(command.tool ?? '');
  if (command.action === 'diff') {
    const diff = await client.diff(row);
    print(diff, formatDiff(diff));
    return;
  }
  const decided = await client.decide(command.action, row);
  const verb = command.action === 'approve' ? 'approved' : 'revoked';
  print(decided, `${verb} ${label(decided)}: ${decided.lifecycle}, as ${decided.decisions.at(-1)?.by ?? '?'}\n`);
}

/** The admin API's base: `--url`, or where the config says the gateway listens. */
export function adminUrl(url: string | undefined, config: GatewayConfig): URL {
  if (url !== undefined) {
    try {
      return new URL(url);
    } catch {
      throw configError(GatewayErrorCode.USAGE, `--url "${url}" is not a URL`);
    }
  }
  const http = config.listen.http;
  if (http === undefined || http.port === 0)
    throw configError(GatewayErrorCode.USAGE, 'the config does not say where the gateway listens: pass --url');
  const host = http.host === '0.0.0.0' || http.host === '::' ? '127.0.0.1' : http.host;
  return new URL(`http://${host.includes(':') ? `[${host}]` : host}:${http.port}/`);
}

const label = (row: LedgerRow) => `${row.name ?? '-'} (${row.server}/${row.tool})`;

export function formatRows(rows: readonly LedgerRow[]): string {
  const body = rows.map((r) => {
    const last = r.decisions.at(-1);
    return [
      r.name ?? '-',
      `${r.server}/${r.tool}`,
      r.lifecycle === 'ACTIVE' && r.changed ? 'ACTIVE (changed)' : r.lifecycle,
      last ? `${last.action} by ${last.by} at ${new Date(last.at).toISOString()}` : '-',
    ];
  });
  return `${textTable([['tool', 'upstream/tool', 'lifecycle', 'last decision'], ...body]).join('\n')}\n`;
}

export function formatDiff(diff: LedgerDiff): string {
  const head = `${label(diff.row)}: ${diff.row.lifecycle}\n--- approved\n+++ current\n`;
  if (diff.approved === null || diff.current === null)
    return `${head}(the approved definition was recorded before the ledger kept definitions)\n`;
  const sign = { same: ' ', removed: '-', added: '+' } as const;
  return `${head}${diff.diff.map((line) => `${sign[line.op]} ${line.text}`).join('\n')}\n`;
}
