import type { Server as SdkServer } from '@modelcontextprotocol/server';

/** What changed for clients: a list, or one resource. */
export type ListChange = 'tools' | 'prompts' | 'resources' | { readonly resourceUpdated: string };

/** Sends a change to the client of one SDK server instance; a closed connection is not an error here. */
export function sendChange(sdk: SdkServer, change: ListChange): void {
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
