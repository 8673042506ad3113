import { createHash } from 'node:crypto';
import { MetaKey } from '@sluice/core';
import type { CallToolResult, GuardedKind, RequestContext } from '@sluice/core';
import type { CallGuardSettings, Checking } from './call-guard.js';
import { check, passOn, readStack } from './call-guard.js';
import type { CallStack } from './call-stack.js';
import { MAX_ENTRY_LENGTH, PLAIN_CALL_STACK_KEY, copyStack } from './call-stack.js';

/** The request kinds besides tool calls: resource reads and subscriptions, prompt gets, completions. */
export type FeatureKind = Exclude<GuardedKind, 'tools/call'>;

export type FeatureGuard = (ctx: RequestContext) => CallToolResult | undefined;

/**
 * The `request` tap for every kind but tool calls. A request's entry is
 * `${originService}/${kind} ${target}` (the item it names): a service that
 * gets the same request for the same item again, with its own entry already
 * in the stack, relays in a loop and refuses it. Without `originService` an
 * entry (`${kind} ${target}`) cannot tell two services apart, so a repeat is
 * no loop; the entry is still appended, so `maxDepth` bounds the chain. The
 * resulting stack goes into the outgoing `_meta` under both keys, which the
 * gateway sends with the request it relays upstream.
 */
export function createFeatureGuard(settings: CallGuardSettings): FeatureGuard {
  const { maxDepth, originService, audit } = settings;
  const prefix = originService === undefined ? '' : `${originService}/`;
  // Relaying a request again for the same item is a loop only where entries name the service.
  const checking: Checking = { loops: originService !== undefined, side: 'provider', of: 'request' };
  return (ctx) => {
    const meta = ctx.meta;
    const name = entryOf(prefix, ctx.kind, ctx.target ?? '');
    let next: CallStack;
    let refused: CallToolResult | undefined;
    if (!Object.hasOwn(meta, MetaKey.CALL_STACK) && !Object.hasOwn(meta, PLAIN_CALL_STACK_KEY)) {
      next = [name];
    } else {
      const stack = readStack(ctx, audit);
      refused = check(ctx, stack, name, maxDepth, checking);
      if (refused !== undefined && !audit) return refused;
      next = copyStack(stack, name);
    }
    passOn(ctx.outgoingMeta, next, originService);
    return refused;
  };
}

/**
 * A request's entry. One whose target would make it longer than an entry may
 * be (a URI may have thousands of characters) names the target by its
 * SHA-256 instead: the same target, the same entry, so a repeat is still seen.
 */
export function entryOf(prefix: string, kind: string, target: string): string {
  const entry = `${prefix}${kind} ${target}`;
  if (entry.length <= MAX_ENTRY_LENGTH) return entry;
  return `${prefix}${kind} sha256:${createHash('sha256').update(target).digest('hex')}`;
}
