import { MetaKey, messageOf } from '@sluice/core';
import type { CallContext, CallToolResult, SluiceTool } from '@sluice/core';
import type { CallStack } from './call-stack.js';
import { EMPTY_STACK, PLAIN_CALL_STACK_KEY, copyStack, getCallStack } from './call-stack.js';
import { callStackTooDeep, cycleOf, loopDetected } from './refusals.js';

export interface CallGuardSettings {
  readonly maxDepth: number;
  readonly originService: string | undefined;
  /** Malformed stacks are logged and treated as empty instead of refused. */
  readonly audit: boolean;
}

export type CallGuard = (ctx: CallContext) => CallToolResult | undefined;

/**
 * The `preCall` tap. A local tool is the provider side: it is refused if its
 * entry is already in the incoming stack, else it appends its entry. An
 * imported tool is the consumer side: it is refused if the upstream's name
 * for it is already in the stack, and forwards the stack unchanged (the
 * upstream appends its own entry on arrival). Either way the resulting stack
 * goes into the outgoing `_meta` under both keys.
 */
export function createCallGuard(settings: CallGuardSettings): CallGuard {
  const { maxDepth, originService, audit } = settings;
  const entryOf = entryNamer(originService);
  // What a call of a local tool that nothing led to sends on: its entry alone, built once per tool (and frozen).
  const firstStacks = new WeakMap<SluiceTool, CallStack>();
  const firstStack = (tool: SluiceTool, name: string): CallStack => {
    let stack = firstStacks.get(tool);
    if (stack === undefined) {
      stack = Object.freeze([name]);
      firstStacks.set(tool, stack);
    }
    return stack;
  };
  return (ctx) => {
    const stack = readStack(ctx, audit);
    const source = ctx.tool.source;
    const imported = source.kind === 'upstream';
    const name = imported ? source.originalName : entryOf(ctx.tool);
    const refused = check(ctx, stack, name, imported, maxDepth);
    if (refused !== undefined && !audit) return refused;
    const out = ctx.outgoingMeta;
    const next =
      imported || stack.length > 0 ? copyStack(stack, imported ? undefined : name) : firstStack(ctx.tool, name);
    out[MetaKey.CALL_STACK] = next;
    out[PLAIN_CALL_STACK_KEY] = next;
    if (originService !== undefined) out[MetaKey.ORIGIN] = originService;
    return refused;
  };
}

/** How this service names its own tools in a stack: bare, or `service/tool` when it has a name. */
function entryNamer(originService: string | undefined): (tool: SluiceTool) => string {
  if (originService === undefined) return (tool) => tool.name;
  // Tools are frozen once registered, so the qualified name is built once per tool, not per call.
  const cache = new WeakMap<SluiceTool, string>();
  return (tool) => {
    let entry = cache.get(tool);
    if (entry === undefined) {
      entry = `${originService}/${tool.name}`;
      cache.set(tool, entry);
    }
    return entry;
  };
}

function check(
  ctx: CallContext,
  stack: CallStack,
  name: string,
  imported: boolean,
  maxDepth: number,
): CallToolResult | undefined {
  const at = stack.indexOf(name);
  if (at !== -1) return refuseLoop(ctx, name, cycleOf(stack, at, name), imported);
  if (stack.length >= maxDepth) return refuseDepth(ctx, stack.length, maxDepth);
  return undefined;
}

function refuseLoop(ctx: CallContext, name: string, cycle: string[], imported: boolean): CallToolResult {
  const side = imported ? 'consumer' : 'provider';
  ctx.logger.warn({ event: 'loop_guard.loop_detected', entry: name, side, cycle }, `loop detected at ${name}`);
  return loopDetected(name, cycle, side);
}

function refuseDepth(ctx: CallContext, depth: number, maxDepth: number): CallToolResult {
  ctx.logger.warn({ event: 'loop_guard.too_deep', depth, maxDepth }, `call stack too deep (${depth} of ${maxDepth})`);
  return callStackTooDeep(depth, maxDepth);
}

/**
 * Reads the incoming stack. A malformed one is a -32602 in enforce mode; in
 * audit mode, which never breaks a call, it is logged and read as empty.
 */
function readStack(ctx: CallContext, audit: boolean): CallStack {
  try {
    return getCallStack(ctx.meta);
  } catch (error) {
    const reason = messageOf(error);
    if (!audit) {
      ctx.logger.debug({ event: 'loop_guard.malformed_stack', reason }, 'refused a malformed call stack');
      throw error;
    }
    ctx.logger.warn({ event: 'loop_guard.malformed_stack', reason }, 'audit: malformed call stack, read as empty');
    return EMPTY_STACK;
  }
}
