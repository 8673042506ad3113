// The public API of @sluice/core, listed by name: anything exported here is public.

export { adopt } from './adopt.js';
export type { AdoptOptions, AdoptableServer } from './adopt.js';

export { noApprover } from './approval.js';
export type { ApprovalDecision, ApprovalRequest, Approver } from './approval.js';

export { callerKeyOf, identityOf } from './auth/identity.js';
export type { CallerIdentity } from './auth/identity.js';

export type { Clock, ClockTimer } from './clock.js';

export { Tokens } from './container.js';
export { Redactions } from './redactions.js';
export type { Services } from './container.js';

export type {
  CallContext,
  CallOptions,
  CallRequest,
  CarriedRound,
  Executor,
  Headers,
  ListContext,
  Outcome,
  Transport,
} from './context.js';
export { isCarriedRound } from './context.js';
export type { FeatureRequests } from './features/feature-guards.js';

export { CoreErrorCode, RpcCode, SluiceError, invalidParams, messageOf } from './errors.js';
export type { SluiceErrorOptions } from './errors.js';

export { createFeatureBatch } from './features/feature-context.js';
export { MAX_URI_LENGTH, UriError, canonicalUri } from './features/canonical-uri.js';
export type {
  FeatureBatch,
  FeatureContext,
  FeatureKind,
  FeatureMethod,
  FeatureResult,
} from './features/feature-context.js';
export type { CoreHooks, HookName, PluginHooks, RequestAnswer, RequestResult, TapOptions } from './hooks.js';

export { formatIssues } from './issues.js';
export { jsonSizeBound } from './json-size-bound.js';
export type { IssueFormat } from './issues.js';

export { createDefaultLogger, createJsonLogger } from './logger.js';
export type { LogFn, Logger } from './logger.js';

export { MetaKey } from './meta.js';
export type { Meta } from './meta.js';

export { PluginModeSchema, definePlugin, parseOptions, pluginOptions } from './plugin.js';
export type { Plugin, PluginApi, PluginMode } from './plugin.js';

export type {
  AuthInfo,
  CallToolResult,
  ContentBlock,
  JsonObject,
  ServerContext,
  Tool,
  ToolAnnotations,
} from './protocol.js';

export { readRefusal, refusal, toolError } from './refusal.js';
export { GUARDED_KINDS, isToolCall } from './request.js';
export type { GuardedKind, RequestContext, RequestExecutor, RequestKind, RequestTarget } from './request.js';
export type { RefusalInit, RefusalMeta } from './refusal.js';

export { compileSchema } from './schema.js';
export type {
  CompiledSchema,
  InferArgs,
  JsonSchema,
  SchemaInput,
  StandardSchemaWithJSON,
  ValidationResult,
} from './schema.js';

export { SluiceServer, createServer } from './server.js';
export type { HttpListener, ListenOptions } from './serving.js';
export type { InProcessCallOptions, ServerOptions } from './server-options.js';
export { MIN_ROUND_STATE_SECRET_BYTES } from './server-options.js';
export type { CatalogChange, ImportResult, ToolCatalog, ToolDraft } from './tool-table.js';

export { Stage } from './stages.js';

export type { StdioHandle, StdioOptions } from './serving.js';

export { MemoryStore } from './store/memory.js';
export { countInWindow } from './store/window.js';
export { AuditKind } from './audit.js';
export type { Audit, AuditEntry, AuditEvent, AuditFrom, AuditOptions } from './audit.js';
export { AUDIT_GENESIS, MemoryAudit } from './store/memory-audit.js';
export type {
  Admission,
  AuditAnchor,
  AuditHead,
  AuditPage,
  AuditRecords,
  StoredAuditEntry,
  CredentialRecords,
  CredentialSlot,
  MessageBus,
  Permit,
  Semaphore,
  SemaphoreOptions,
  SessionIndex,
  SessionIndexLimits,
  SetOptions,
  Store,
  WindowCount,
} from './store/types.js';

export { ToolNameSchema, annotationsOf, createImportBatch, isToolName } from './tool.js';
export type {
  ConnectionSummary,
  ImportBatch,
  ImportSource,
  SkippedTool,
  SluiceTool,
  ToolDefinition,
  ToolHandler,
  ToolPolicy,
  ToolSource,
} from './tool.js';

export { ToolSelectorListSchema, ToolSelectorSchema, selectTools } from './tool-selector.js';
export type { SelectorOptions, ToolMatcher, ToolSubject } from './tool-selector.js';
export { ToolSettings } from './tool-settings.js';
export type { ToolSettingsEntries } from './tool-settings.js';

export { matchGlob } from './glob.js';
export { isContinuedRound, wireStateOf } from './round-presentation.js';
export type { CredentialVault, ImportOptions, ImportedFeatures, UpstreamStatus } from './upstreaming.js';
export { ValueLimits } from './limits.js';
export { SafeJsonSchemaValidator, safeJsonSchemaValidator } from './safe-json-schema.js';
export { VERSION } from './version.js';
