import type { Server as SdkServer } from '@modelcontextprotocol/server';
import type { LogMessage } from './features/log-types.js';
import { levelRank } from './features/log-types.js';
import { isSubscribed, levelOf } from './features/session-state.js';

/**
 * What changed for clients: a list, or one resource (to every client, or
 * only to those subscribed to it), or a log message of an upstream sent
 * outside any call (to each client at the level it asked for).
 */
export type ListChange =
  | 'tools'
  | 'prompts'
  | 'resources'
  | { readonly resourceUpdated: string; readonly subscribersOnly?: boolean }
  | { readonly log: LogMessage };

/** Sends a change to the client of one SDK server instance; a closed connection is not an error here. */
export function sendChange(sdk: SdkServer, change: ListChange): void {
  if (typeof change === 'object' && 'log' in change) {
    const level = levelOf(sdk);
    if (level === undefined || levelRank(change.log.level) >= levelRank(level))
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- see features/log-types.ts: 2025-11-25 logging is relayed
      void sdk.sendLoggingMessage(change.log).catch(() => {});
    return;
  }
  if (typeof change === 'object' && change.subscribersOnly === true && !isSubscribed(sdk, change.resourceUpdated))
    return;
  const sent =
    change === 'tools'
      ? sdk.sendToolListChanged()
      : change === 'prompts'
        ? sdk.sendPromptListChanged()
        : change === 'resources'
          ? sdk.sendResourceListChanged()
          : sdk.sendResourceUpdated({ uri: change.resourceUpdated });
  void sent.catch(() => {});
}

/** How a transport hears about changes and server shutdown. */
export interface TransportHooks {
  /** Calls `notify` whenever what clients may see changes; returns a detach function. */
  onListChanged(notify: (change: ListChange) => void): () => void;
  /** Calls `close` when the server closes; returns a detach function. */
  onClose(close: () => Promise<void>): () => void;
}
