// The public API of @sluice/plugin-loop-guard, listed by name.

export { PLUGIN_NAME, loopGuard } from './plugin.js';

export { LoopGuardOptions } from './options.js';
export type { LoopGuardConfig } from './options.js';

export { LoopGuardErrorCode } from './errors.js';

export {
  MAX_ENTRY_LENGTH,
  MAX_STACK_ENTRIES,
  PLAIN_CALL_STACK_KEY,
  getCallStack,
  withCallStack,
} from './call-stack.js';
export type { CallStack } from './call-stack.js';

export { VERSION } from './version.js';
