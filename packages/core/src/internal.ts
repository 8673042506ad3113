// @sluice/core/internal: what the core's own modules, tests and benchmarks share.
// Not public API: it may change in any release. Plugins and applications use `@sluice/core`.

export { HOOK_NAMES } from './hooks.js';
export { MAX_META_KEYS, emptyMeta, readIncomingMeta, toPlainMeta } from './meta.js';
export { toProtocolError } from './protocol-errors.js';
export { RpcError, isRpcError } from './rpc-error.js';
export type { RpcErrorLike } from './rpc-error.js';
export { isRefusal, toolErrorText } from './refusal.js';
export { isStandardSchema } from './schema.js';
export { internalsOf } from './server-internals.js';
export type { ServerInternals } from './server-internals.js';
export { systemClock } from './clock.js';
export { LocalSemaphore } from './store/semaphore.js';
export { checkWindow } from './store/window.js';
export type { FenceSource } from './store/semaphore.js';
export { assertToolName } from './tool.js';
export { ToolTable } from './tool-table.js';
export { authInfoFor } from './auth/identity.js';
export { fetchBounded, fetchJsonBounded } from './auth/fetch-json.js';
export { namesMethod } from './protocol.js';
export { rpcErrorBody } from './rpc-error-body.js';
export { provideHttpServing, provideStdioServing } from './serving.js';
export type { HttpHost, HttpServing, StdioHost, StdioServing } from './serving.js';
export { importServerPackage, importServerStdio } from './server-sdk-loader.js';
export { changedListFor, itemsChanged, sendChange } from './transport-hooks.js';
export type { ChangeAudience, ItemsChanged, ListChange, ListName, TransportHooks } from './transport-hooks.js';
export { readBounded } from './auth/fetch-json.js';
export { subjectTokenOf } from './auth/identity.js';
export { serverClosed } from './errors.js';
export type { FeatureGuards } from './features/feature-context.js';
export { accessRefusal, featureRequest, guardsOf, requestedUri } from './features/feature-guards.js';
export type { ListenCaller } from './features/feature-guards.js';
export { guardedRunner, refusalError, sendRequest } from './features/guarded-run.js';
export type { FeatureTarget } from './features/guarded-run.js';
export { levelRank } from './features/log-types.js';
export type { LogLevel, LogMessage } from './features/log-types.js';
export {
  MAX_SUBSCRIPTIONS,
  isSubscribed,
  levelOf,
  meterSubscriptions,
  sessionLevelOf,
  setLevel,
  setSessionLevel,
  subscribe,
  subscriptionBytes,
  unsubscribe,
} from './features/session-state.js';
export { compileGlobs } from './glob.js';
export type { GlobMatcher } from './glob.js';
export { asJsonRpcMessage } from './message-shape.js';
export { planRequest, requestsTapped } from './pipeline.js';
export { isInputRequired } from './protocol.js';
export { attributeRefusal } from './refusal.js';
export { headersOf } from './request-headers.js';
export { requireCjs } from './require-cjs.js';
export { presentRound, wireStateOf } from './round-presentation.js';
export { provideUpstreamImporting } from './upstreaming.js';
export type { ConsentServing, ServerUpstreams, UpstreamHost, UpstreamImporting } from './upstreaming.js';
export { provideAuditing } from './audit.js';
export type { Auditing } from './audit.js';
