import { messageOf } from './errors.js';
import type { Logger } from './logger.js';
import type { Plugin } from './plugin.js';
import type { ListChange, TransportHooks } from './transport-hooks.js';

/**
 * What hangs on a server while it runs and goes when it closes: the
 * listeners told of list changes (one per connected SDK server) and the
 * closers (transports, upstream connections). Transports reach both through
 * the {@link TransportHooks} this hands them.
 */
export class ServerAttachments implements TransportHooks {
  private readonly listeners = new Set<(change: ListChange) => void>();
  private readonly closers = new Set<() => Promise<void>>();

  /** Tells every listener what changed. */
  notify(change: ListChange): void {
    for (const send of this.listeners) send(change);
  }

  onListChanged(notify: (change: ListChange) => void): () => void {
    this.listeners.add(notify);
    return () => void this.listeners.delete(notify);
  }

  onClose(close: () => Promise<void>): () => void {
    this.closers.add(close);
    return () => void this.closers.delete(close);
  }

  /** Runs every closer registered so far, at once; one that fails does not stop the others. */
  async closeAll(): Promise<void> {
    const closers = [...this.closers];
    this.closers.clear();
    await Promise.allSettled(closers.map((close) => close()));
  }
}

/** Closes plugins in the reverse of their order; a plugin whose close fails is logged with its name, and the rest close. */
export async function closePlugins(plugins: readonly Plugin[], logger: Logger): Promise<void> {
  for (const plugin of [...plugins].reverse()) {
    try {
      await plugin.close?.();
    } catch (error) {
      logger.error(
        { event: 'plugin.failed', plugin: plugin.name, hook: 'close', err: error },
        `plugin close failed: ${messageOf(error)}`,
      );
    }
  }
}
