// The public API of @sluice/upstream, listed by name: anything exported here is public.
// Importing this package gives every Sluice server `import()`.

import { provideUpstreamImporting } from '@sluice/core/internal';
import { ImportedUpstreams } from './server-upstreams.js';

provideUpstreamImporting({ attach: (host) => new ImportedUpstreams(host) });

export { backoffDelay } from './backoff.js';
export type { BackoffPolicy } from './backoff.js';
export type { UpstreamErrorCode } from './errors.js';
export { endStdioChildren } from './exit-guard.js';
export type { FeatureCatalog } from './features/catalog.js';
export type { UpstreamHealth, UpstreamStatus } from './health.js';
export {
  HttpConnectionSchema,
  ImportOptionsSchema,
  InProcessConnectionSchema,
  SseConnectionSchema,
  StdioConnectionSchema,
  UpstreamConnectionSchema,
} from './options.js';
export type {
  ImportOptions,
  InProcessServer,
  ResolvedImportOptions,
  UpstreamConnection,
  UpstreamTransportType,
} from './options.js';
export { ClientCredentialsAuthSchema, UpstreamAuthSchema } from './oauth/options.js';
export type { UpstreamAuth } from './oauth/options.js';
export { RequestFilterHeader, RequestFilterOptions, requestFilter } from './request-filter.js';
export { TRACER_NAME, extractTraceContext, injectTraceContext, tracingRegistered, withTraceSpan } from './tracing.js';
export type { TraceSpanOptions } from './tracing.js';
export { VERSION } from './version.js';
