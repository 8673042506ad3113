import type { Server } from '@modelcontextprotocol/server';
import { RpcCode } from '../errors.js';
import { RpcError } from '../rpc-error.js';
import type { LogLevel } from './log-types.js';

// What one client of the gateway asked for, kept with the SDK server that serves it and gone with it.
const subscriptions = new WeakMap<Server, Set<string>>();
const levels = new WeakMap<Server, LogLevel>();

/** Subscriptions one client may hold at once: each one is kept, and may hold one upstream subscription. */
export const MAX_SUBSCRIPTIONS = 1_000;

/** Records a client's subscription; false when it already had it. Throws past `MAX_SUBSCRIPTIONS`. */
export function subscribe(sdk: Server, uri: string): boolean {
  let uris = subscriptions.get(sdk);
  if (uris === undefined) subscriptions.set(sdk, (uris = new Set()));
  if (uris.has(uri)) return false;
  if (uris.size >= MAX_SUBSCRIPTIONS)
    throw new RpcError(
      RpcCode.INVALID_PARAMS,
      `A client may hold at most ${MAX_SUBSCRIPTIONS} resource subscriptions: unsubscribe from one first`,
    );
  uris.add(uri);
  return true;
}

/** Forgets a client's subscription; false when it had none. */
export function unsubscribe(sdk: Server, uri: string): boolean {
  return subscriptions.get(sdk)?.delete(uri) ?? false;
}

export function isSubscribed(sdk: Server, uri: string): boolean {
  return subscriptions.get(sdk)?.has(uri) ?? false;
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
