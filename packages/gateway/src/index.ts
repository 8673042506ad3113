// The public API of @sluice/gateway, listed by name: anything exported here is public.

export { Gateway, createGateway } from './gateway.js';
export type { GatewayListeners, GatewayOptions, UpstreamImport } from './gateway.js';

export {
  CustomPluginConfig,
  GatewayConfig,
  HttpListenConfig,
  ListenConfig,
  LogLevel,
  PluginsConfig,
  TelemetryConfig,
  UpstreamConfig,
  UpstreamConnectionConfig,
} from './config-schema.js';
export type { GatewayConfigInput, UpstreamConfigInput } from './config-schema.js';

export { parseGatewayConfig } from './parse-config.js';
export type { ParseConfigOptions } from './parse-config.js';
export { loadConfigFile } from './config-file.js';
export type { LoadedConfig } from './config-file.js';
export { interpolateEnv } from './interpolate.js';
export type { Environment } from './interpolate.js';
export { GATEWAY_SCHEMA_ID, gatewayJsonSchema } from './json-schema.js';

export { checkGateway } from './check.js';
export type {
  CheckOptions,
  CheckReport,
  CheckedPlugin,
  CheckedTool,
  CheckedUpstream,
  SkippedByCheck,
  ToolRisk,
} from './check.js';
export { loadCustomPlugins } from './custom-plugins.js';
export type { CustomPlugin } from './custom-plugins.js';
export { formatCheckReport } from './check-format.js';

export { TELEMETRY_PLUGIN_NAME, telemetry } from './telemetry.js';
export type { TelemetryOptions } from './telemetry.js';
export { GATEWAY_TRACER_NAME } from './call-span.js';
export { GatewayMetrics, LATENCY_BUCKETS_SECONDS } from './call-metrics.js';
export type { CallOutcomeLabel } from './call-metrics.js';
export { metricsRoute } from './metrics-route.js';
export { PROMETHEUS_CONTENT_TYPE, escapeLabelValue } from './prometheus.js';

export { ExitCode, main } from './main.js';
export type { CliIo } from './main.js';

export { GatewayErrorCode } from './errors.js';
export { VERSION } from './version.js';
