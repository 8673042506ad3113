import type { ApprovalDecision, Logger } from '@sluice/core';
import type { ApprovalTarget } from './approval/targets.js';
import type { ComposedRisk } from './scoring/compose.js';
import type { RiskLevel } from './scoring/levels.js';
import type { LedgerCheck } from './ledger/ledger.js';
import type { ScanHit } from './scan/scanner.js';
import type { ServerAssessment } from './scoring/server-risk.js';
import type { ToolAssessment } from './scoring/tool-risk.js';

/** The names of the events the plugin logs (`{ event: name, ... }`). */
export const RiskEvent = Object.freeze({
  SERVER_RISK_COMPUTED: 'ServerRiskComputed',
  TOOL_PUBLISH_RISK_COMPUTED: 'ToolPublishRiskComputed',
  FLOOR_OVERRIDE_TRIGGERED: 'FloorOverrideTriggered',
  POISONING_HIT: 'PoisoningHit',
  RESULT_POISONING_HIT: 'ResultPoisoningHit',
  JUDGE_UNAVAILABLE: 'JudgeUnavailable',
  HASH_LEDGER_MISMATCH: 'HashLedgerMismatch',
  COMPOSITION_LIFECYCLE: 'CompositionLifecycle',
  /** An upstream's lines past its share (`logs.perUpstream`) were left out: how many, in which window. */
  UPSTREAM_LINES_SUPPRESSED: 'UpstreamLinesSuppressed',
  APPROVAL_REQUESTED: 'ApprovalRequested',
  APPROVAL_DECIDED: 'ApprovalDecided',
  /** An operator answered a question (console, admin API, CLI, webhook link). */
  APPROVAL_ANSWERED: 'ApprovalAnswered',
  /** Nobody was asked: the caller's share of waiting questions, or the list, is full (`APPROVAL_BUSY`). */
  APPROVAL_BUSY: 'ApprovalBusy',
  APPROVAL_KEY_EPHEMERAL: 'ApprovalKeyEphemeral',
  TOOL_START: 'tool.start',
  TOOL_DONE: 'tool.done',
  TOOL_CRASH: 'tool.crash',
} as const);

/** What happened to a tool's exposure. */
export type LifecyclePhase =
  'exposed' | 'skipped' | 'would-skip' | 'held' | 'approved' | 'revoked' | 'renamed' | 'removed';

export function logServerRisk(logger: Logger, server: string, assessment: ServerAssessment): void {
  const { level, total, axes, hostClass, trust, floors } = assessment;
  // Start-up would otherwise say one line per upstream and per tool; the gateway's summary and console show these.
  logger.debug(
    { event: RiskEvent.SERVER_RISK_COMPUTED, server, level, total, axes, hostClass, trust, floors },
    `upstream "${server}" scores ${level}`,
  );
  for (const trigger of floors) logFloor(logger, { scope: 'server', server, trigger, level });
}

export function logToolRisk(
  logger: Logger,
  server: string,
  tool: string,
  assessment: ToolAssessment,
  risk: ComposedRisk,
): void {
  const { axes, docGaps, docWaived, floors } = assessment;
  logger.debug(
    {
      event: RiskEvent.TOOL_PUBLISH_RISK_COMPUTED,
      server,
      tool,
      level: risk.level,
      composed: risk.composed,
      serverLevel: risk.server,
      toolLevel: risk.tool,
      axes,
      docGaps,
      docWaived,
      floors,
      hitlMitigated: risk.hitlMitigated,
    },
    `tool "${tool}" publishes at ${risk.level}`,
  );
  for (const trigger of floors)
    logFloor(logger, { scope: 'tool', server, tool, trigger, level: assessment.level }, 'debug');
}

function logFloor(
  logger: Logger,
  fields: { scope: 'server' | 'tool'; server: string; tool?: string; trigger: string; level: RiskLevel },
  at: 'warn' | 'debug' = 'warn',
): void {
  logger[at](
    { event: RiskEvent.FLOOR_OVERRIDE_TRIGGERED, ...fields },
    `floor override ${fields.trigger} sets ${fields.level}`,
  );
}

export function logPoisoningHit(
  logger: Logger,
  server: string,
  tool: string,
  hit: ScanHit,
  action: 'warned' | 'blocked',
): void {
  logger.warn(
    { event: RiskEvent.POISONING_HIT, server, tool, ...hit, action },
    `poisoning signature ${hit.pattern} in ${hit.surface} of "${tool}"`,
  );
}

/** The outside judge gave no verdict on a definition (timeout, error, bad answer): the scan's hits stand alone. */
export function logJudgeUnavailable(logger: Logger, server: string, tool: string, reason: string): void {
  logger.warn({ event: RiskEvent.JUDGE_UNAVAILABLE, server, tool, reason }, `no judge verdict on "${tool}": ${reason}`);
}

export function logLedgerMismatch(logger: Logger, server: string, tool: string, check: LedgerCheck): void {
  logger.warn(
    {
      event: RiskEvent.HASH_LEDGER_MISMATCH,
      server,
      tool,
      approved: check.approved,
      current: check.hash,
      previous: check.previous,
      lifecycle: check.lifecycle,
    },
    `upstream "${server}" redefined "${tool}": calls wait for re-review`,
  );
}

export interface LifecycleFields {
  readonly server: string;
  readonly tool: string;
  readonly phase: LifecyclePhase;
  readonly level?: RiskLevel;
  readonly code?: string;
  readonly reason?: string;
  readonly from?: string;
}

export function logLifecycle(logger: Logger, fields: LifecycleFields): void {
  const line = { event: RiskEvent.COMPOSITION_LIFECYCLE, ...fields };
  const message = `tool "${fields.tool}" of "${fields.server}": ${fields.phase}${fields.reason ? ` (${fields.reason})` : ''}`;
  // One line per exposed tool at start-up is noise at info; an operator's approval is worth seeing.
  if (fields.phase === 'exposed') logger.debug(line, message);
  else if (fields.phase === 'approved') logger.info(line, message);
  else logger.warn(line, message);
}

/**
 * How the person is asked: a server-to-client request (2025-11-25), an
 * input-required round (2026-07-28), or an operator question (console,
 * admin API, `sluice approvals`, webhook).
 */
export type ApprovalChannel = 'elicitation' | 'input-required' | 'operator';

export function logApprovalRequested(logger: Logger, target: ApprovalTarget, via: ApprovalChannel): void {
  const { server, tool, level } = target;
  logger.info(
    { event: RiskEvent.APPROVAL_REQUESTED, server, tool, level, via },
    `asking a person to approve "${tool}"`,
  );
}

export function logApprovalDecided(logger: Logger, target: ApprovalTarget, decision: ApprovalDecision): void {
  const { server, tool, level } = target;
  if (decision.approved) {
    logger.info(
      { event: RiskEvent.APPROVAL_DECIDED, server, tool, level, decision: 'approved' },
      `a person approved "${tool}"`,
    );
    return;
  }
  const detail = 'detail' in decision ? decision.detail : undefined;
  const line = {
    event: RiskEvent.APPROVAL_DECIDED,
    server,
    tool,
    level,
    decision: decision.reason,
    ...(detail === undefined ? {} : { detail }),
  };
  logger.warn(line, `"${tool}" was not approved: ${decision.reason}`);
}
