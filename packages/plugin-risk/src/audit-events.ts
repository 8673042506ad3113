import { AuditKind } from '@sluice/core';
import type { AuditEvent, AuditFrom, Logger } from '@sluice/core';
import type { ApprovalEvent } from './approval/approval-events.js';
import type { LedgerCheck } from './ledger/ledger.js';

/**
 * Where the plugin appends its audit entries: `services.audit.append` of the
 * server it is applied to; `from`, the call an entry is about (its caller's budget).
 */
export type AuditSink = (event: AuditEvent, from?: AuditFrom) => Promise<unknown>;

/**
 * Appends one approval event (`RiskPlugin.onApprovalEvent`) to the audit log,
 * without waiting: the approval's path never waits on the log, and a failure
 * is logged, never thrown. `approval` ties a question's entries together (the
 * operator question's id; a question the client answers has none). `from`:
 * the call it is about, whose caller's budget of entries it counts against
 * (an operator's answer has none, and is always written).
 */
export function auditApprovalEvent(sink: AuditSink, logger: Logger, event: ApprovalEvent, from?: AuditFrom): void {
  const common = {
    tool: event.tool,
    server: event.server,
    ...optional({ caller: event.caller, approval: event.id }),
  };
  let entry: AuditEvent;
  switch (event.kind) {
    case 'asked':
      // How the client's person is asked, or that an operator is.
      entry = {
        kind: AuditKind.APPROVAL_ASKED,
        ...common,
        channel: event.via ?? event.channel,
        ...optional({ reason: event.reason, decision: event.joined ? 'joined' : undefined }),
      };
      break;
    case 'answered': {
      // A client's "no" is a declined or cancelled form; an operator's carries the operator's words.
      const byClient = event.by === 'client';
      const decision = event.decision === 'denied' && byClient ? (event.reason ?? 'declined') : event.decision;
      entry = {
        kind: AuditKind.APPROVAL_ANSWERED,
        ...common,
        by: event.by,
        channel: event.via,
        decision,
        ...optional({ reason: byClient ? undefined : event.reason }),
      };
      break;
    }
    case 'lapsed':
      entry = { kind: AuditKind.APPROVAL_LAPSED, ...common, channel: event.channel, decision: 'timeout' };
      break;
    case 'refused':
      entry = {
        kind: AuditKind.APPROVAL_REFUSED,
        ...common,
        by: 'sluice',
        channel: event.channel,
        decision: event.code,
        reason: event.why,
      };
      break;
  }
  sink(entry, from).catch((error: unknown) =>
    logger.error(
      { event: 'audit.append_failed', err: error, tool: event.tool, server: event.server },
      `the approval event "${event.kind}" was not audited`,
    ),
  );
}

/** An operator's decision in the ledger. */
export function auditLedgerDecision(
  sink: AuditSink,
  action: 'approve' | 'revoke',
  server: string,
  tool: string,
  by: string,
  channel: string,
): Promise<unknown> {
  const kind = action === 'approve' ? AuditKind.LEDGER_APPROVED : AuditKind.LEDGER_REVOKED;
  return sink({ kind, server, tool, by, channel });
}

/** The ledger held a tool (or prompt, resource) whose definition changed since it was approved. */
export function auditLedgerHeld(sink: AuditSink, server: string, tool: string, check: LedgerCheck): Promise<unknown> {
  return sink({
    kind: AuditKind.LEDGER_HELD,
    server,
    tool,
    by: 'sluice',
    channel: 'ledger',
    decision: check.lifecycle,
    reason: `definition ${check.hash.slice(0, 12)} differs from the approved ${check.approved.slice(0, 12)}`,
  });
}

/** Records a hold without waiting (the import's path is synchronous); a failure is logged, never thrown. */
export function recordHold(
  sink: AuditSink | undefined,
  logger: Logger,
  server: string,
  tool: string,
  check: LedgerCheck,
): void {
  if (sink === undefined || !isNewHold(check)) return;
  auditLedgerHeld(sink, server, tool, check).catch((error: unknown) =>
    logger.error({ event: 'audit.append_failed', err: error, server, tool }, 'the ledger hold was not audited'),
  );
}

/** Whether a check is worth an entry: a new mismatch (`isNewMismatch`), and calls now wait. */
export function isNewHold(check: LedgerCheck): boolean {
  return isNewMismatch(check) && check.lifecycle === 'AWAITING_REREVIEW';
}

/**
 * Whether a mismatch is news: the definition changed in this check, to one
 * the ledger has not reported since the tool's last approval. A re-list of a
 * held tool, or a tool flipping between the same definitions, is not.
 */
export function isNewMismatch(check: LedgerCheck): boolean {
  return check.status === 'MISMATCH' && check.previous !== check.hash && check.repeated !== true;
}

function optional(fields: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out;
}
