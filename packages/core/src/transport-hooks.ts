import type { Server as SdkServer } from '@modelcontextprotocol/server';
import type { Transport } from './context.js';
import type { LogMessage } from './features/log-types.js';
import { levelRank } from './features/log-types.js';
import { isSubscribed, levelOf } from './features/session-state.js';
import { callerKeyOf, identityOf } from './auth/identity.js';
import type { AuthInfo } from './protocol.js';

/** The lists a client can be told changed. */
export type ListName = 'tools' | 'prompts' | 'resources';

/** Whom a connection serves, as a list filter sees a request of theirs: told a change only if it may see it. */
export interface ChangeAudience {
  /** The verified caller of the session or stream; undefined for one without (stdio, in-process, no auth). */
  readonly authInfo: AuthInfo | undefined;
  readonly transport: Transport;
}

/**
 * A list that changed in some of its items (added, removed or changed). A
 * connection hears of it only when `seenBy` says its caller may see one of
 * those items, so that a change to what a caller may not see is no event it
 * can time or count. `seenBy` is asked once per connection, with no upstream
 * round trip.
 */
export interface ItemsChanged {
  readonly list: ListName;
  seenBy(audience: ChangeAudience): boolean;
}

/**
 * What changed for clients: a whole list (every client hears), some items of
 * a list (the clients that may see one of them hear), one resource (to every
 * client, or only to those subscribed to it), or a log message of an
 * upstream sent outside any call (to each client at the level it asked for).
 */
export type ListChange =
  | ListName
  | ItemsChanged
  | { readonly resourceUpdated: string; readonly subscribersOnly?: boolean }
  | { readonly log: LogMessage };

/**
 * A change to some items of `list`, with `seenBy` asked once per caller: the
 * connections of one caller (its sessions and streams, over one transport)
 * share its answer, so a caller's many connections cost one filter of the
 * items, not one each.
 */
export function itemsChanged(list: ListName, seenBy: (audience: ChangeAudience) => boolean): ItemsChanged {
  const answers = new Map<string, boolean>();
  return {
    list,
    seenBy(audience) {
      const key = audienceKey(audience);
      let seen = answers.get(key);
      if (seen === undefined) answers.set(key, (seen = seenBy(audience)));
      return seen;
    },
  };
}

/**
 * Claims that differ from one token of a caller to the next (when it was
 * issued, when it lapses, its id, the sign-in it came from, and what common
 * identity providers add per token: Entra ID's `uti`, `aio`, `rh`, Keycloak's
 * `session_state`), never between what two callers may see: left out of the
 * key, so that a caller's sessions share one answer whatever token each was
 * opened with. Another claim that changes per token makes each token a
 * caller of its own here: more work, never a wrong answer.
 */
const PER_TOKEN_CLAIMS: ReadonlySet<string> = new Set([
  'iat',
  'exp',
  'nbf',
  'jti',
  'auth_time',
  'sid',
  'session_state',
  'nonce',
  'at_hash',
  'c_hash',
  'uti',
  'aio',
  'rh',
]);

/**
 * What a list filter can tell two audiences apart by: the transport and the
 * verified identity (its scopes and claims too, but those of one token), or,
 * for an `AuthInfo` another verifier made, its caller key and scopes.
 */
function audienceKey({ authInfo, transport }: ChangeAudience): string {
  const identity = identityOf(authInfo);
  if (identity === undefined)
    return `${transport}\n${JSON.stringify([callerKeyOf(authInfo) ?? '', authInfo?.scopes ?? []])}`;
  const claims =
    identity.claims === undefined
      ? undefined
      : Object.fromEntries(Object.entries(identity.claims).filter(([name]) => !PER_TOKEN_CLAIMS.has(name)));
  return `${transport}\n${JSON.stringify({ ...identity, claims })}`;
}

/**
 * The list a connection of `audience` is to be told changed, or undefined
 * (the change is no list change, or touches nothing its caller may see). A
 * `seenBy` that throws tells nothing: a change is never told for want of an
 * answer.
 */
export function changedListFor(change: ListChange, audience: ChangeAudience): ListName | undefined {
  if (typeof change === 'string') return change;
  if (!('list' in change)) return undefined;
  try {
    return change.seenBy(audience) ? change.list : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Sends a change to the client of one SDK server instance, which serves
 * `audience`; a closed connection is not an error here.
 */
export function sendChange(sdk: SdkServer, change: ListChange, audience: ChangeAudience): void {
  if (typeof change === 'object' && 'log' in change) {
    const level = levelOf(sdk);
    if (level === undefined || levelRank(change.log.level) >= levelRank(level))
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- see features/log-types.ts: 2025-11-25 logging is relayed
      void sdk.sendLoggingMessage(change.log).catch(() => {});
    return;
  }
  if (typeof change === 'object' && 'resourceUpdated' in change) {
    if (change.subscribersOnly !== true || isSubscribed(sdk, change.resourceUpdated))
      void sdk.sendResourceUpdated({ uri: change.resourceUpdated }).catch(() => {});
    return;
  }
  const list = changedListFor(change, audience);
  if (list === undefined) return;
  const sent =
    list === 'tools'
      ? sdk.sendToolListChanged()
      : list === 'prompts'
        ? sdk.sendPromptListChanged()
        : sdk.sendResourceListChanged();
  void sent.catch(() => {});
}

/** How a transport hears about changes and server shutdown. */
export interface TransportHooks {
  /** Calls `notify` whenever what clients may see changes; returns a detach function. */
  onListChanged(notify: (change: ListChange) => void): () => void;
  /** Calls `close` when the server closes; returns a detach function. */
  onClose(close: () => Promise<void>): () => void;
}
