import { createHash, randomBytes } from 'node:crypto';
import { AuditKind } from '@sluice/core';
import type { ApprovalDecision, AuditEvent, Logger } from '@sluice/core';
import type { ApprovalChannel } from './events.js';
import type { ApprovalTarget } from './approval/targets.js';
import type { LedgerCheck } from './ledger/ledger.js';

/** Where the plugin appends its audit entries: `services.audit.append` of the server it is applied to. */
export type AuditSink = (event: AuditEvent) => Promise<unknown>;

/** What the audit log knows of one question to a person: its id and how it was asked. */
export interface ApprovalTrace {
  /** Ties the question's entries together; derived from a 2026-07-28 state's nonce, so both rounds agree. */
  id?: string;
  via?: ApprovalChannel;
}

/** A fresh id for a question asked by elicitation. */
export function newApprovalId(): string {
  return randomBytes(12).toString('base64url');
}

/** The id of a 2026-07-28 question, from its nonce (never the nonce itself). */
export function approvalIdOf(nonce: string): string {
  return createHash('sha256').update(`approval:${nonce}`, 'utf8').digest('base64url').slice(0, 16);
}

export function auditAsked(
  sink: AuditSink,
  target: ApprovalTarget,
  trace: ApprovalTrace,
  caller: string | undefined,
  reason: string | undefined,
): Promise<unknown> {
  return sink({
    kind: AuditKind.APPROVAL_ASKED,
    ...targetFields(target),
    ...optional({ caller, reason, channel: trace.via, approval: trace.id }),
  });
}

/** The outcome of a question: answered by the client's person, lapsed, or refused without an answer. */
export function auditDecided(
  sink: AuditSink,
  target: ApprovalTarget,
  trace: ApprovalTrace,
  caller: string | undefined,
  decision: ApprovalDecision,
): Promise<unknown> {
  const common = { ...targetFields(target), ...optional({ caller, channel: trace.via, approval: trace.id }) };
  if (decision.approved)
    return sink({ kind: AuditKind.APPROVAL_ANSWERED, ...common, by: 'client', decision: 'approved' });
  if (decision.reason === 'input-required') return Promise.resolve();
  const reason = 'detail' in decision ? decision.detail : undefined;
  const fields = { ...common, decision: decision.reason, ...optional({ reason }) };
  switch (decision.reason) {
    case 'declined':
    case 'cancelled':
      return sink({ kind: AuditKind.APPROVAL_ANSWERED, ...fields, by: 'client' });
    case 'timeout':
      return sink({ kind: AuditKind.APPROVAL_LAPSED, ...fields });
    default:
      return sink({ kind: AuditKind.APPROVAL_REFUSED, ...fields, by: 'sluice' });
  }
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

/** Whether a check is worth an entry: the definition changed in this check and calls now wait. */
export function isNewHold(check: LedgerCheck): boolean {
  return check.status === 'MISMATCH' && check.lifecycle === 'AWAITING_REREVIEW' && check.previous !== check.hash;
}

function targetFields(target: ApprovalTarget): { tool: string; server: string } {
  return { tool: target.tool, server: target.server };
}

function optional(fields: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out;
}
