import type { Redis } from 'ioredis';

/** Hears one message of a channel: a semaphore's wake-up ignores it, a bus subscriber reads it. */
type Listener = (message: string) => void;

interface Channel {
  readonly listeners: Set<Listener>;
  /** Settles when Redis confirmed the subscription. */
  readonly subscribed: Promise<unknown>;
}

/**
 * Pub/sub wake-ups on one dedicated connection: a channel is subscribed while
 * someone in this process waits on it, and unsubscribed when nobody does.
 */
export class Wakeups {
  private readonly channels = new Map<string, Channel>();

  constructor(private readonly subscriber: Redis) {
    subscriber.on('message', (name: string, message: string) => {
      const channel = this.channels.get(name);
      if (channel) for (const wake of channel.listeners) wake(message);
    });
    // Once the connection is ready (first, and after each reconnect), every channel watched is subscribed again:
    // a subscription asked for while it was still connecting may never have been made.
    subscriber.on('ready', () => {
      if (this.channels.size > 0) this.subscriber.subscribe(...this.channels.keys()).catch(() => {});
    });
  }

  /** Settles once the subscription is confirmed, so no later publish is missed. */
  watch(name: string, wake: Listener): Promise<unknown> {
    const existing = this.channels.get(name);
    if (existing) {
      existing.listeners.add(wake);
      return existing.subscribed;
    }
    const channel: Channel = { listeners: new Set([wake]), subscribed: this.subscriber.subscribe(name) };
    this.channels.set(name, channel);
    // A failed subscription is forgotten, so that the next watch tries again.
    channel.subscribed.catch(() => {
      if (this.channels.get(name) === channel) this.channels.delete(name);
    });
    return channel.subscribed;
  }

  unwatch(name: string, wake: Listener): void {
    const channel = this.channels.get(name);
    if (!channel?.listeners.delete(wake) || channel.listeners.size > 0) return;
    this.channels.delete(name);
    // Best effort: a stale subscription only costs an ignored message.
    this.subscriber.unsubscribe(name).catch(() => {});
  }

  /** Channels subscribed now. */
  get size(): number {
    return this.channels.size;
  }
}
