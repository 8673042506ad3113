// The public API of @sluice/plugin-code-mode, listed by name.

export { buildBindings, declarations, filePaths, readFile, runtimeDeclarations, toolDocs } from './bindings.js';
export type { BindingSource, Bindings, BoundTool } from './bindings.js';
export { CodeModeEvent, PLUGIN_NAME, codeMode } from './plugin.js';
export type { CodeModePlugin, ScriptCallRecord, ScriptShareUsage } from './plugin.js';
export { CodeModeErrorCode } from './errors.js';
export { CodeModeOptions, MetaToolNames, SandboxLimits } from './options.js';
export { schemaToTs } from './schema-to-ts.js';
export { VERSION } from './version.js';
