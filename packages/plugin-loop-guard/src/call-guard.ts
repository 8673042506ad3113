import { MetaKey, messageOf } from '@sluice/core';
import type { CallContext, CallToolResult, Meta, RequestContext, SluiceTool } from '@sluice/core';
import type { CallStack } from './call-stack.js';
import { EMPTY_STACK, PLAIN_CALL_STACK_KEY, copyStack, getCallStack } from './call-stack.js';
import { callStackTooDeep, cycleOf, loopDetected } from './refusals.js';
import type { Entries, Side } from './refusals.js';

export interface CallGuardSettings {
  readonly maxDepth: number;
  readonly originService: string | undefined;
  /** Malformed stacks are logged and treated as empty instead of refused. */
  readonly audit: boolean;
}

export type CallGuard = (ctx: CallContext) => CallToolResult | undefined;

/** A tool call's check: as the provider of a local tool, or the consumer of an imported one. */
const PROVIDER: Checking = { loops: true, side: 'provider', of: 'tool' };
const CONSUMER: Checking = { loops: true, side: 'consumer', of: 'tool' };
/** A relay's own entry without `originService`: it cannot tell this service from another, so it counts for depth only. */
const UNNAMED_RELAY: Checking = { loops: false, side: 'consumer', of: 'tool' };

/**
 * The `preCall` tap. A local tool is the provider side: it is refused if its
 * entry is already in the incoming stack, else it appends its entry. An
 * imported tool is the consumer side: it is refused if the upstream's name
 * for it is already in the stack. A nested call of it (`ctx.call`, a chain)
 * forwards the stack unchanged, since the local tool that made it has its
 * entry there; a client's call of it is a relay, which nothing here would
 * otherwise mark, so it is checked for and appends its own entry (see
 * `relayName`): two services relaying one tool to each other are
 * caught at the first repeat. The upstream appends its entry on arrival.
 * Either way the resulting stack goes into the outgoing `_meta` under both
 * keys.
 */
export function createCallGuard(settings: CallGuardSettings): CallGuard {
  const { maxDepth, originService, audit } = settings;
  const entryOf = entryFinder(localName(originService));
  const relayEntryOf = entryFinder(relayName(originService));
  const relayCheck = originService === undefined ? UNNAMED_RELAY : CONSUMER;
  return (ctx) => {
    const tool = ctx.tool;
    const source = tool.source;
    const imported = source.kind === 'upstream';
    const own = !imported ? entryOf(tool) : ctx.parent === undefined ? relayEntryOf(tool) : undefined;
    const meta = ctx.meta;
    let next: CallStack;
    let refused: CallToolResult | undefined;
    if (!Object.hasOwn(meta, MetaKey.CALL_STACK) && !Object.hasOwn(meta, PLAIN_CALL_STACK_KEY)) {
      // Nothing led to this call (most calls): nothing to refuse, and what goes on is known per tool.
      next = own?.first ?? EMPTY_STACK;
    } else {
      const stack = readStack(ctx, audit);
      if (!imported) refused = check(ctx, stack, (own as ToolEntry).name, maxDepth, PROVIDER);
      else {
        if (own !== undefined) refused = check(ctx, stack, own.name, maxDepth, relayCheck);
        refused ??= check(ctx, stack, source.originalName, maxDepth, CONSUMER);
      }
      if (refused !== undefined && !audit) return refused;
      next = copyStack(stack, own?.name);
    }
    passOn(ctx.outgoingMeta, next, originService);
    return refused;
  };
}

/** Writes the stack a request passes on under both keys, and this service's name as the origin, if it has one. */
export function passOn(out: Meta, next: CallStack, originService: string | undefined): void {
  out[MetaKey.CALL_STACK] = next;
  out[PLAIN_CALL_STACK_KEY] = next;
  if (originService !== undefined) out[MetaKey.ORIGIN] = originService;
}

/** A tool's entry in a stack, and the stack a call of it that nothing led to sends on. */
interface ToolEntry {
  readonly name: string;
  readonly first: CallStack;
}

/**
 * A tool's entry, made once per tool from `name` (tools are frozen once
 * registered), with its one-entry stack, frozen: calls share it.
 */
function entryFinder(name: (tool: SluiceTool) => string): (tool: SluiceTool) => ToolEntry {
  const entries = new WeakMap<SluiceTool, ToolEntry>();
  return (tool) => {
    let entry = entries.get(tool);
    if (entry === undefined) {
      const named = name(tool);
      entry = { name: named, first: Object.freeze([named]) };
      entries.set(tool, entry);
    }
    return entry;
  };
}

/** How this service names its own tools in a stack: bare, or `service/tool` when it has a name. */
const localName =
  (originService: string | undefined) =>
  (tool: SluiceTool): string =>
    originService === undefined ? tool.name : `${originService}/${tool.name}`;

/**
 * How this service names a tool it relays to its upstream (an imported tool a
 * client called): `service/tool` with a name, as a local tool's entry (names
 * here are unique, so one entry per service and tool says which service took
 * the call); without one, `tools/call tool`, spelt as other requests' entries
 * are, which hold a space no tool name can and so never equal a peer's tool
 * entry.
 */
const relayName =
  (originService: string | undefined) =>
  (tool: SluiceTool): string =>
    originService === undefined ? `tools/call ${tool.name}` : `${originService}/${tool.name}`;

/** How a stack is checked: whether a repeat of the entry is a loop, which side this service is on, whose entries. */
export interface Checking {
  readonly loops: boolean;
  readonly side: Side;
  readonly of: Entries;
}

/**
 * The refusal of a request whose entry `name` is already in the stack (when a
 * repeat is a loop), or whose stack already holds `maxDepth` entries; each
 * logged at warn (with the request's kind, for a request that is no tool call).
 */
export function check(
  ctx: Pick<RequestContext, 'kind' | 'logger'>,
  stack: CallStack,
  name: string,
  maxDepth: number,
  how: Checking,
): CallToolResult | undefined {
  const kind = how.of === 'request' ? { kind: ctx.kind } : {};
  const at = how.loops ? stack.indexOf(name) : -1;
  if (at !== -1) {
    const cycle = cycleOf(stack, at, name);
    ctx.logger.warn(
      { event: 'loop_guard.loop_detected', entry: name, side: how.side, cycle, ...kind },
      `loop detected at ${name}`,
    );
    return loopDetected(name, cycle, how.side, how.of);
  }
  if (stack.length >= maxDepth) {
    const depth = stack.length;
    ctx.logger.warn(
      { event: 'loop_guard.too_deep', depth, maxDepth, ...kind },
      `call stack too deep (${depth} of ${maxDepth})`,
    );
    return callStackTooDeep(depth, maxDepth, how.of);
  }
  return undefined;
}

/**
 * Reads the incoming stack of a request (a tool call's, or any other kind's).
 * A malformed one is a -32602 in enforce mode; in audit mode, which never
 * breaks a request, it is logged and read as empty.
 */
export function readStack(ctx: Pick<RequestContext, 'meta' | 'logger'>, audit: boolean): CallStack {
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
