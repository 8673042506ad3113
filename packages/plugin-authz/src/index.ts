// The public API of @sluice/plugin-authz, listed by name.

export { PLUGIN_NAME, authz } from './plugin.js';
export { AuthzErrorCode } from './errors.js';
export { AuthzOptions, AuthzRule, CallerMatch } from './options.js';
export { AuthzPolicy, callerMatches } from './policy.js';
export { VERSION } from './version.js';
