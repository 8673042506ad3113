import { MetaKey, SluiceError, invalidParams } from '@sluice/core';
import { LoopGuardErrorCode } from './errors.js';

/**
 * The plain `_meta` key that services built on the seed's wire format use.
 * We read it beside `dev.sluice/callStack` and write both, so the two kinds
 * of service interoperate in both directions.
 */
export const PLAIN_CALL_STACK_KEY = 'callStack';

/** The most entries an incoming stack may have; more is malformed (-32602), whatever `maxDepth` says. */
export const MAX_STACK_ENTRIES = 256;

/** The longest entry accepted: a 128-character tool name, a service name and a `/` fit easily. */
export const MAX_ENTRY_LENGTH = 256;

/** A call stack: the tools in progress, outermost first. */
export type CallStack = readonly string[];

/** The stack of a call that nothing led to. */
export const EMPTY_STACK: CallStack = Object.freeze([]);

/**
 * The incoming call stack of a `_meta` object: the longer of the
 * `dev.sluice/callStack` and plain `callStack` values (a service that only
 * knows the plain key forwards ours unchanged, so the longer one is the most
 * recent). Absent or null keys mean an empty stack. Anything else that is not
 * an array of at most 256 non-empty strings of at most 256 characters throws
 * a -32602 error naming the key and what is wrong.
 */
export function getCallStack(meta: unknown): CallStack {
  if (typeof meta !== 'object' || meta === null) return EMPTY_STACK;
  const ours = ownValue(meta, MetaKey.CALL_STACK);
  const plain = ownValue(meta, PLAIN_CALL_STACK_KEY);
  const a = ours === undefined || ours === null ? undefined : checkStack(ours, MetaKey.CALL_STACK);
  if (plain === ours) return a ?? EMPTY_STACK;
  const b = plain === undefined || plain === null ? undefined : checkStack(plain, PLAIN_CALL_STACK_KEY);
  if (a === undefined) return b ?? EMPTY_STACK;
  if (b === undefined) return a;
  return b.length > a.length ? b : a;
}

/**
 * A copy of `meta` whose call stack (under both keys) has `name` appended.
 * `__proto__` keys are dropped, never merged. Throws -32602 if the stack in
 * `meta` is malformed, and `INVALID_STACK_ENTRY` if `name` cannot be an entry.
 */
export function withCallStack(meta: unknown, name: string): Record<string, unknown> {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_ENTRY_LENGTH) {
    throw new SluiceError(
      LoopGuardErrorCode.INVALID_STACK_ENTRY,
      `A call stack entry must be a string of 1-${MAX_ENTRY_LENGTH} characters, got ${describe(name)}`,
    );
  }
  const next = copyStack(getCallStack(meta), name);
  const out: Record<string, unknown> = {};
  if (typeof meta === 'object' && meta !== null) {
    for (const key of Object.keys(meta)) if (key !== '__proto__') out[key] = (meta as Record<string, unknown>)[key];
  }
  out[MetaKey.CALL_STACK] = next;
  out[PLAIN_CALL_STACK_KEY] = next;
  return out;
}

/** A new stack: `stack`, then `name` if given. */
export function copyStack(stack: CallStack, name?: string): string[] {
  // A sized array filled by index: several times faster than slice() or spread for short stacks.
  const length = stack.length;
  const next = new Array<string>(name === undefined ? length : length + 1);
  for (let i = 0; i < length; i++) next[i] = stack[i] as string;
  if (name !== undefined) next[length] = name;
  return next;
}

/** Checks one attacker-controlled stack value; cheap checks first, so huge values cost nothing. */
function checkStack(value: unknown, key: string): CallStack {
  if (!Array.isArray(value))
    throw invalidParams(`_meta["${key}"] must be an array of tool names, got ${describe(value)}`);
  const length = value.length;
  if (length > MAX_STACK_ENTRIES) {
    throw invalidParams(`_meta["${key}"] has ${length} entries; at most ${MAX_STACK_ENTRIES} are accepted`);
  }
  for (let i = 0; i < length; i++) {
    const entry: unknown = value[i];
    if (typeof entry !== 'string')
      throw invalidParams(`_meta["${key}"][${i}] must be a tool name string, got ${describe(entry)}`);
    if (entry.length === 0 || entry.length > MAX_ENTRY_LENGTH) {
      throw invalidParams(`_meta["${key}"][${i}] must have 1-${MAX_ENTRY_LENGTH} characters, got ${entry.length}`);
    }
  }
  return value as CallStack;
}

function ownValue(meta: object, key: string): unknown {
  return Object.hasOwn(meta, key) ? (meta as Record<string, unknown>)[key] : undefined;
}

/** Names a value's kind without echoing it: it may be huge, or written to mislead whoever reads the error. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
