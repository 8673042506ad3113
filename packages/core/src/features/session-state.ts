import type { Server } from '@modelcontextprotocol/server';
import { RpcCode } from '../errors.js';
import { RpcError } from '../rpc-error.js';
import type { LogLevel } from './log-types.js';

// What one client of the gateway asked for, kept with the SDK server that serves it and gone with it.
const subscriptions = new WeakMap<Server, { readonly uris: Set<string>; chars: number }>();
const levels = new WeakMap<Server, LogLevel>();
const meters = new WeakMap<Server, SubscriptionMeter>();

/** Subscriptions one client may hold at once: each one is kept, and may hold one upstream subscription. */
export const MAX_SUBSCRIPTIONS = 1_000;

/** Characters of subscribed URIs one client may hold at once, all together (what a fleet's session record keeps). */
export const MAX_SUBSCRIPTION_CHARS = 64 * 1024;

/**
 * What one subscription is charged against its session's memory share: the URI
 * is kept three times (the client's set, the server's held subscriptions, the
 * upstream catalog's map), two bytes a character, with each entry's overhead.
 */
export function subscriptionBytes(uri: string): number {
  return 256 + uri.length * 6;
}

/** Where a transport charges a client's subscriptions: its session's share of the memory budget. */
export interface SubscriptionMeter {
  /** Takes `bytes` from the session's share; false when they do not fit (nothing taken). */
  charge(bytes: number): boolean;
  /** Gives `bytes` back. */
  release(bytes: number): void;
}

/** Charges the subscriptions of the client `sdk` serves to `meter` from now on. */
export function meterSubscriptions(sdk: Server, meter: SubscriptionMeter): void {
  meters.set(sdk, meter);
}

/**
 * Records a client's subscription; false when it already had it. Throws past
 * `MAX_SUBSCRIPTIONS`, past `MAX_SUBSCRIPTION_CHARS`, or when its session's
 * memory share has no room for it.
 */
export function subscribe(sdk: Server, uri: string): boolean {
  let held = subscriptions.get(sdk);
  if (held === undefined) subscriptions.set(sdk, (held = { uris: new Set(), chars: 0 }));
  if (held.uris.has(uri)) return false;
  if (held.uris.size >= MAX_SUBSCRIPTIONS)
    throw new RpcError(
      RpcCode.INVALID_PARAMS,
      `A client may hold at most ${MAX_SUBSCRIPTIONS} resource subscriptions: unsubscribe from one first`,
    );
  if (held.chars + uri.length > MAX_SUBSCRIPTION_CHARS)
    throw new RpcError(
      RpcCode.INVALID_PARAMS,
      `A client's subscribed URIs may hold at most ${MAX_SUBSCRIPTION_CHARS} characters in all: unsubscribe from one first`,
    );
  if (meters.get(sdk)?.charge(subscriptionBytes(uri)) === false)
    throw new RpcError(
      RpcCode.INVALID_PARAMS,
      "The server's session memory has no room for this subscription (the caller's share, or all of it, is taken by sessions in use): unsubscribe from a resource or end a session first",
    );
  held.uris.add(uri);
  held.chars += uri.length;
  return true;
}

/** Forgets a client's subscription; false when it had none. */
export function unsubscribe(sdk: Server, uri: string): boolean {
  const held = subscriptions.get(sdk);
  if (held === undefined || !held.uris.delete(uri)) return false;
  held.chars -= uri.length;
  meters.get(sdk)?.release(subscriptionBytes(uri));
  return true;
}

export function isSubscribed(sdk: Server, uri: string): boolean {
  return subscriptions.get(sdk)?.uris.has(uri) ?? false;
}

export function setLevel(sdk: Server, level: LogLevel): void {
  levels.set(sdk, level);
}

export function levelOf(sdk: Server): LogLevel | undefined {
  return levels.get(sdk);
}

/** Levels by transport session, for log messages relayed during a call; bounded, oldest forgotten first. */
const sessionLevels = new Map<string, LogLevel>();
const MAX_SESSIONS = 10_000;

export function setSessionLevel(sessionId: string | undefined, level: LogLevel): void {
  const key = sessionId ?? '';
  sessionLevels.delete(key);
  if (sessionLevels.size >= MAX_SESSIONS) sessionLevels.delete(sessionLevels.keys().next().value ?? '');
  sessionLevels.set(key, level);
}

export function sessionLevelOf(sessionId: string | undefined): LogLevel | undefined {
  return sessionLevels.get(sessionId ?? '');
}
