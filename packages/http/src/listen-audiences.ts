import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import type { AuthInfo } from '@sluice/core';
import { changedListFor } from '@sluice/core/internal';
import type { ListChange, ListName } from '@sluice/core/internal';

/** The event of a changed list, as the SDK's listen router names it. */
const LIST_EVENTS: Readonly<Record<ListName, ServerEvent>> = {
  tools: { kind: 'tools_list_changed' },
  prompts: { kind: 'prompts_list_changed' },
  resources: { kind: 'resources_list_changed' },
};

/** One open `subscriptions/listen` stream, and the caller of the request that opened it. */
interface Stream {
  readonly deliver: (event: ServerEvent) => void;
  /** Undefined for a stream opened outside `as()`, whose caller is not known. */
  readonly opener: { readonly authInfo: AuthInfo | undefined } | undefined;
}

/**
 * The change events of the 2026-07-28 `subscriptions/listen` streams, each
 * stream with its caller. The SDK's listen router subscribes a stream while
 * it serves the listen request, and every listen request reaches the
 * router inside `as()`, which names that request's caller. A change to some items of a
 * list reaches only the streams whose caller may see one of them, as on
 * 2025-11-25 sessions; a stream whose caller is not known hears only changes
 * to whole lists.
 */
export class ListenAudiences implements ServerEventBus {
  private readonly streams = new Set<Stream>();
  private readonly openers = new AsyncLocalStorage<{ readonly authInfo: AuthInfo | undefined }>();

  constructor(private readonly onerror: (error: Error) => void) {}

  /** Serves one request as `authInfo`'s: a stream it opens is that caller's. */
  as<T>(authInfo: AuthInfo | undefined, serve: () => T): T {
    return this.openers.run({ authInfo }, serve);
  }

  subscribe(deliver: (event: ServerEvent) => void): () => void {
    const stream: Stream = { deliver, opener: this.openers.getStore() };
    this.streams.add(stream);
    return () => void this.streams.delete(stream);
  }

  publish(event: ServerEvent): void {
    for (const stream of [...this.streams]) this.deliver(stream, event);
  }

  /** Tells each stream of a change, as its caller may see it; a log message has no stream here. */
  notify(change: ListChange): void {
    if (typeof change === 'object' && 'log' in change) return;
    if (typeof change === 'object' && 'resourceUpdated' in change) {
      this.publish({ kind: 'resource_updated', uri: change.resourceUpdated });
      return;
    }
    for (const stream of [...this.streams]) {
      const { opener } = stream;
      if (opener === undefined && typeof change !== 'string') continue;
      const list = changedListFor(change, { authInfo: opener?.authInfo, transport: 'http' });
      if (list !== undefined) this.deliver(stream, LIST_EVENTS[list]);
    }
  }

  /** One stream's failure does not keep the event from the others. */
  private deliver(stream: Stream, event: ServerEvent): void {
    try {
      stream.deliver(event);
    } catch (error) {
      this.onerror(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
