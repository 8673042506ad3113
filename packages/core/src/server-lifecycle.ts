import { messageOf, serverClosed } from './errors.js';
import type { Logger } from './logger.js';
import type { Plugin } from './plugin.js';
import type { ListChange, TransportHooks } from './transport-hooks.js';

/** What closing a server ends, in this order. */
export interface ClosingParts {
  /** Waits for running calls, up to the server's `drainTimeoutMs`. */
  drain(): Promise<void>;
  /** Closed last first, after every transport and connection. */
  readonly plugins: readonly Plugin[];
  readonly logger: Logger;
  /** Closes the store when the server created it; undefined when it was given one. */
  readonly closeStore: (() => Promise<void>) | undefined;
}

/**
 * A server's life after construction: whether it is open, who hears about
 * list changes, and what closes with it (transports, upstream connections).
 */
export class ServerLifecycle {
  private closing = false;
  private readonly listChangedNotifiers = new Set<(change: ListChange) => void>();
  private readonly closers = new Set<() => Promise<void>>();

  /** What every transport is given: change notices and shutdown. */
  readonly transportHooks: TransportHooks = {
    onListChanged: (notify) => this.onListChanged(notify),
    onClose: (close) => this.onClose(close),
  };

  /** Whether `close()` has begun. */
  get closed(): boolean {
    return this.closing;
  }

  assertOpen(): void {
    if (this.closing) throw serverClosed('call');
  }

  /** Tells every transport's clients what changed. */
  notify(change: ListChange): void {
    for (const send of this.listChangedNotifiers) send(change);
  }

  onListChanged(notify: (change: ListChange) => void): () => void {
    this.listChangedNotifiers.add(notify);
    return () => void this.listChangedNotifiers.delete(notify);
  }

  /** Registers something to close with the server (a transport, an upstream connection). */
  onClose(close: () => Promise<void>): () => void {
    this.closers.add(close);
    return () => void this.closers.delete(close);
  }

  /**
   * Stops taking calls, waits for running ones, then closes every transport
   * and connection, the plugins (last applied first) and the store.
   */
  async close(parts: ClosingParts): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await parts.drain();
    const closers = [...this.closers];
    this.closers.clear();
    await Promise.allSettled(closers.map((close) => close()));
    for (const plugin of [...parts.plugins].reverse()) {
      try {
        await plugin.close?.();
      } catch (error) {
        parts.logger.error(
          { event: 'plugin.failed', plugin: plugin.name, hook: 'close', err: error },
          `plugin close failed: ${messageOf(error)}`,
        );
      }
    }
    await parts.closeStore?.();
  }
}
