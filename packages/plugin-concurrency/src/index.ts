// The public API of @sluice/plugin-concurrency, listed by name.

export { PLUGIN_NAME, concurrency } from './plugin.js';
export { VERSION } from './version.js';
export { ConcurrencyErrorCode } from './errors.js';
export { FENCING_TOKEN, fencingToken } from './fencing.js';
export { ConcurrencyOptions, LimitOptions, MAX_QUEUE, MutexOptions } from './options.js';
export type { ConcurrencyConfig, Limit, MutexConfig } from './options.js';
export type { ConcurrencyPolicy, MutexPolicy } from './tool-policy.js';
