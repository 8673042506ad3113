// The public API of @sluice/upstream, listed by name: anything exported here is public.
// Importing this package gives every Sluice server `import()`.

import { provideUpstreamImporting } from '@sluice/core/internal';
import { ImportedUpstreams } from './server-upstreams.js';
import type { FeatureCatalog } from './features/catalog.js';
import type { CredentialVault as OwnCredentialVault } from './oauth/credential-vault.js';
import type { UpstreamStatus as OwnUpstreamStatus } from './health.js';
import type { ImportOptions as OwnImportOptions } from './options.js';

// Here, in the entry point, so that every program that imports the package (its declarations included) sees them.
declare module '@sluice/core' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: fills in core's empty interface
  interface ImportOptions extends OwnImportOptions {}
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: fills in core's empty interface
  interface UpstreamStatus extends OwnUpstreamStatus {}
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: fills in core's empty interface
  interface ImportedFeatures extends FeatureCatalog {}
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: fills in core's empty interface
  interface CredentialVault extends OwnCredentialVault {}
}

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
export { CredentialVault, CredentialVaultOptions } from './oauth/credential-vault.js';
export { ClientCredentialsAuthSchema, UpstreamAuthSchema } from './oauth/options.js';
export type { UpstreamAuth } from './oauth/options.js';
export { RequestFilterHeader, RequestFilterOptions, requestFilter } from './request-filter.js';
export { TRACER_NAME, extractTraceContext, injectTraceContext, tracingRegistered, withTraceSpan } from './tracing.js';
export type { TraceSpanOptions } from './tracing.js';
export { VERSION } from './version.js';
