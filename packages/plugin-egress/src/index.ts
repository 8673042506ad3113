// The public API of @sluice/plugin-egress, listed by name.

export { PLUGIN_NAME, UPSTREAM_READ_FACTOR, egress } from './plugin.js';
export { VERSION } from './version.js';
export { EgressErrorCode } from './errors.js';
export { formatBytes, interventionText } from './intervention.js';
export type { EgressRecord } from './intervention.js';
export { resultSize } from './measure.js';
export { EgressOptions, EgressPolicy, MIN_PAYLOAD_BYTES } from './options.js';
