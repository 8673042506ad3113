// The public API of @sluice/plugin-risk, listed by name: anything exported here is public.

export { PLUGIN_NAME, RiskTokens, risk } from './plugin.js';
export { VERSION } from './version.js';
export type { HeldCall, OperatorAnswer, RiskPlugin } from './plugin.js';
export { MAX_PENDING_APPROVALS } from './approval/pending.js';
export type { PendingApproval } from './approval/pending.js';
export { APPROVAL_CHANNELS } from './approval/options.js';
export type { ApprovalChannelSetting } from './approval/options.js';
export { MAX_ANSWER_REASON_CHARS, MAX_LISTED_QUESTIONS, OPERATOR_VIAS } from './approval/questions.js';
export type { AnswerRefusal, OperatorVia } from './approval/questions.js';
export type { ApprovalEvent, ApprovalEventListener, ApprovalEventSubject } from './approval/approval-events.js';

export { RiskOptions, RiskSettings } from './options.js';
export type { RiskConfig } from './options.js';
export type { CallEndKind } from './calls/call-events.js';

export { RiskErrorCode } from './errors.js';
export { RiskEvent } from './events.js';
export type { ApprovalChannel, LifecyclePhase } from './events.js';

export { assess } from './assess.js';
export type { AssessInput, RiskReport, ServerReport, ToolReport } from './assess.js';
export type { ToolShape } from './definition.js';
export type { RiskToolPolicy, ToolRule } from './policy.js';

export { LEVEL_LABELS, RISK_LEVELS, bucket } from './scoring/levels.js';
export type { RiskLevel } from './scoring/levels.js';
export { ServerFloor, assessServer } from './scoring/server-risk.js';
export type { AuthKind, ServerAssessment, ServerConfig, ServerContext, TrustOrigin } from './scoring/server-risk.js';
export type { HostClass, TransportKind } from './scoring/host-class.js';
export type { CatalogEntry, Docs, TrustTier } from './scoring/catalog.js';
export { ToolFloor, assessTool } from './scoring/tool-risk.js';
export type { DocGap, ServerTrust, ToolAssessment, ToolTraits } from './scoring/tool-risk.js';
export { applyHitlMitigation, composeRisk } from './scoring/compose.js';
export type { ComposeOptions, ComposedRisk, ScoredSide } from './scoring/compose.js';

export { PoisonPattern } from './scan/patterns.js';
export type { Severity } from './scan/patterns.js';
export { scanText, scanTool } from './scan/scanner.js';
export { BoundedJudge, JudgeEndpoint, JudgeUnavailable, httpJudge } from './scan/judge.js';
export type { JudgeBounds, JudgeFunction, JudgeInput, JudgeVerdict } from './scan/judge.js';
export type { CrossServerReferences, ScanContext, ScanHit, ScanResult } from './scan/scanner.js';

export {
  DEFAULT_MAX_VANISHED,
  FingerprintLedger,
  MAX_DECISIONS,
  MAX_DEFINITION_CHARS,
  MAX_HELD_KEPT,
  MAX_VERDICT_HITS,
  definitionText,
  fingerprint,
} from './ledger/ledger.js';
export type {
  LedgerBatch,
  LedgerCheck,
  LedgerDecision,
  LedgerEntry,
  LedgerLimits,
  LedgerStatus,
  LedgerVerdict,
  Lifecycle,
  VerdictInput,
} from './ledger/ledger.js';
export { MAX_DIFF_CELLS, lineDiff } from './ledger/diff.js';
export type { DiffLine } from './ledger/diff.js';

export { JsonFileStore } from './ledger/store.js';
export type { LedgerStore } from './ledger/store.js';

export type { ShadowingRule, ShadowingViolation } from './exposure/shadowing.js';
export type { PublishedRisk } from './exposure/published-risk.js';
