/** How a transport hears about tool-list changes and server shutdown. */
export interface TransportHooks {
  /** Calls `notify` whenever the exposed tools change; returns a detach function. */
  onListChanged(notify: () => void): () => void;
  /** Calls `close` when the server closes; returns a detach function. */
  onClose(close: () => Promise<void>): () => void;
}
