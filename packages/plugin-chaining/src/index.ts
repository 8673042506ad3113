// The public API of @sluice/plugin-chaining, listed by name.

export { chaining, PLUGIN_NAME } from './plugin.js';
export { VERSION } from './version.js';
export { ChainingOptions, ClientChainingOptions } from './options.js';
export { ChainingErrorCode } from './errors.js';

export { callToolWithChaining } from './client-chaining.js';
export type { ChainingClient } from './client-chaining.js';

export { next, typedNext, withNext } from './next-tool.js';
export type { NextToolMeta, ToolArgMap, ToolArgsOf, TypedNext } from './next-tool.js';

export { NEXT_TOOL_KEYS, NextToolSchema, readDirective } from './directive.js';
export type { DirectiveRead, NextTool, NextToolKey } from './directive.js';

export { describeChain } from './chain-record.js';
export type { ChainRecord, ChainStep, StepOutcome } from './chain-record.js';

export type { ChainingPolicy } from './tool-policy.js';
