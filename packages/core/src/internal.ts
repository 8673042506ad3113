// @sluice/core/internal: what the core's own modules, tests and benchmarks share.
// Not public API: it may change in any release. Plugins and applications use `@sluice/core`.

export { HOOK_NAMES } from './hooks.js';
export { MAX_META_KEYS, emptyMeta, readIncomingMeta, toPlainMeta } from './meta.js';
export { toProtocolError } from './protocol-errors.js';
export { isRefusal, toolErrorText } from './refusal.js';
export { isStandardSchema } from './schema.js';
export { internalsOf } from './server-internals.js';
export type { ServerInternals } from './server-internals.js';
export { systemClock } from './clock.js';
export { LocalSemaphore } from './store/semaphore.js';
export type { FenceSource } from './store/semaphore.js';
export { assertToolName } from './tool.js';
export { ToolTable } from './tool-table.js';
export { backoffDelay } from './upstream/backoff.js';
export type { BackoffPolicy } from './upstream/backoff.js';
export type { UpstreamErrorCode } from './upstream/errors.js';
export { InProcessConnectionSchema, UpstreamConnectionSchema } from './upstream/options.js';
export type { ResolvedImportOptions } from './upstream/options.js';
export { TRACER_NAME } from './upstream/tracing.js';
export { authInfoFor } from './auth/identity.js';
export { fetchBounded, fetchJsonBounded } from './auth/fetch-json.js';
export { namesMethod } from './protocol.js';
export { rpcErrorBody } from './rpc-error-body.js';
export { provideHttpServing } from './serving.js';
export type { HttpHost, HttpServing } from './serving.js';
export { sendChange } from './transport-hooks.js';
export type { ListChange, TransportHooks } from './transport-hooks.js';
