import type { Writable } from 'node:stream';
import { AuditChainCheck } from '@sluice/audit';
import type { AuditVerification } from '@sluice/audit';
import type { StoredAuditEntry } from '@sluice/core';
import { AdminClient } from './admin/client.js';
import { adminUrl } from './ledger-command.js';
import type { GatewayConfig } from './config-schema.js';

export type AuditAction = 'export' | 'verify';

export interface AuditCommand {
  readonly action: AuditAction;
  /** The gateway's address; default: the config's `listen.http`. */
  readonly url?: string;
  /** `export` only: start after this entry number. */
  readonly after?: number;
  readonly json: boolean;
}

/** Entries asked for per page. */
const PAGE = 1000;

/**
 * `sluice audit export | verify`: the running gateway's audit log through
 * its admin API. `export` writes every kept entry as JSON Lines, exactly as
 * stored; `verify` checks the chain itself (hashes, numbers, links, anchor
 * and head) and resolves false when it found an entry modified, deleted,
 * moved or overwritten. The key comes from `SLUICE_ADMIN_KEY`.
 */
export async function runAuditCommand(
  command: AuditCommand,
  config: GatewayConfig,
  key: string | undefined,
  out: Writable,
): Promise<boolean> {
  const client = new AdminClient(adminUrl(command.url, config), key);
  if (command.action === 'export') {
    for await (const page of pages(client, command.after ?? 0)) for (const line of page.lines) out.write(`${line}\n`);
    return true;
  }
  const check = new AuditChainCheck();
  let head = { seq: 0, hash: '' };
  for await (const page of pages(client, 0)) {
    check.page({ anchor: page.anchor, head: page.head, entries: page.entries });
    head = page.head;
  }
  const result = check.finish(head);
  out.write(command.json ? `${JSON.stringify(result, null, 2)}\n` : formatVerification(result));
  return result.ok;
}

interface ReadPage {
  readonly lines: readonly string[];
  readonly entries: StoredAuditEntry[];
  readonly anchor: { seq: number; prev: string };
  readonly head: { seq: number; hash: string };
}

async function* pages(client: AdminClient, after: number): AsyncGenerator<ReadPage> {
  let cursor = after;
  for (;;) {
    const page = await client.auditPage(cursor, PAGE);
    const entries = numbered(page.lines, cursor);
    yield { ...page, entries };
    if (page.next === undefined || page.next <= cursor) return;
    cursor = page.next;
  }
}

/** Each line with the number it claims (one past the previous when it claims none: an overwritten entry). */
function numbered(lines: readonly string[], after: number): StoredAuditEntry[] {
  let last = after;
  return lines.map((text) => {
    const seq = claimedSeq(text) ?? last + 1;
    last = seq;
    return { seq, text };
  });
}

function claimedSeq(text: string): number | undefined {
  try {
    const value = (JSON.parse(text) as { seq?: unknown } | null)?.seq;
    return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function formatVerification(result: AuditVerification): string {
  const span =
    result.entries === 0 ? 'no entries' : `entries ${result.anchor.seq}-${result.head.seq} (${result.entries} read)`;
  if (result.ok) return `audit log intact: ${span}, head ${result.head.hash.slice(0, 16)}\n`;
  const lines = result.problems.map((p) => `  ${p.kind.padEnd(10)} #${p.seq}: ${p.message}`);
  return `audit log TAMPERED: ${result.problems.length} problem(s) in ${span}\n${lines.join('\n')}\n`;
}
