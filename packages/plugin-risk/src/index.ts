// The public API of @sluice/plugin-risk, listed by name: anything exported here is public.

export { PLUGIN_NAME, RiskTokens, risk } from './plugin.js';
export { VERSION } from './version.js';
export type { RiskPlugin } from './plugin.js';

export { RiskOptions } from './options.js';
export type { RiskConfig } from './options.js';
export { ApprovalOptions } from './approval-options.js';
export type { ApprovalConfig } from './approval-options.js';
export type { CallEndKind, CallEventLevel, CallEventScope } from './call-events.js';

export { RiskErrorCode } from './errors.js';

export { HITL_ENFORCED, RiskEngine, assess } from './assess.js';
export type { AssessInput, Candidate, RiskReport, ServerReport, ToolReport } from './assess.js';

export { LEVEL_LABELS, RISK_LEVELS, bucket } from './levels.js';
export type { RiskLevel } from './levels.js';

export { AuthSchema, ServerConfigSchema, ServerFloor, assessServer, isPrivilegedScope } from './server-risk.js';
export type { AuthKind, ServerAssessment, ServerConfig, ServerContext, TrustOrigin } from './server-risk.js';

export { classifyHost, classifyHostname } from './host-class.js';
export type { HostClass, TransportKind } from './host-class.js';

export { CatalogEntrySchema, DocsSchema, TrustTierSchema, matchCatalog } from './catalog.js';
export type { CatalogEntry, Docs, TrustTier } from './catalog.js';

export { SideEffectSchema, ToolFloor, assessTool, hasIrreversibleVerb } from './tool-risk.js';
export type { DocGap, ServerTrust, ToolAssessment, ToolTraits } from './tool-risk.js';

export { LOCAL_RISK, applyHitlMitigation, composeRisk } from './compose.js';
export type { ComposeOptions, ComposedRisk, ScoredSide } from './compose.js';

export { PoisonPattern } from './patterns.js';
export { SCAN_LIMITS, ToolNameIndex, scanText, scanTool } from './scanner.js';
export type { ScanContext, ScanHit, ScanResult } from './scanner.js';

export { MAX_CANONICAL_DEPTH, canonicalJson, isWellFormed } from './canonical.js';
export type { CanonicalOptions } from './canonical.js';

export { FingerprintLedger, bodyFingerprint, fingerprint } from './ledger.js';
export type { LedgerBatch, LedgerCheck, LedgerEntry, LedgerSharing, LedgerStatus, Lifecycle } from './ledger.js';
export { JsonFileStore } from './ledger-store.js';
export type { LedgerStore } from './ledger-store.js';

export { aliasKey, checkShadowing } from './shadowing.js';
export type { ExposureView, ShadowingRule, ShadowingRules, ShadowingViolation } from './shadowing.js';

export { RiskEvent } from './events.js';
export type { ApprovalChannel, LifecyclePhase } from './events.js';

export { ToolRuleSchema } from './policy.js';
export type { RiskToolPolicy, ToolRule } from './policy.js';

export type { PublishedRisk } from './importer.js';
export type { ToolShape } from './definition.js';
