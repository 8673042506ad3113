import type { MessageBus } from '@sluice/core';
import type { Backend } from './backend.js';
import { redisUnavailable } from './errors.js';
import type { KeySpace } from './keys.js';
import type { Wakeups } from './wakeups.js';

/** The largest message the bus carries: what it routes (a session's answers, its notifications) is bounded before. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * Messages between replicas over Redis pub/sub, on the store's subscriber
 * connection: a channel is subscribed while someone in this process listens
 * on it. Nothing is kept: a replica that was not listening misses the message.
 */
export class RedisMessages implements MessageBus {
  constructor(
    private readonly backend: Backend,
    private readonly wakeups: Wakeups,
    private readonly keys: KeySpace,
  ) {}

  async publish(channel: string, message: string): Promise<void> {
    if (Buffer.byteLength(message, 'utf8') > MAX_MESSAGE_BYTES)
      throw new RangeError(`A bus message is limited to ${MAX_MESSAGE_BYTES} bytes`);
    try {
      await this.backend.command(() => this.backend.connection.client.publish(this.name(channel), message));
    } catch (error) {
      throw redisUnavailable(error);
    }
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<() => void> {
    const name = this.name(channel);
    // A copy per subscription, so that two subscribers with one function each get their own unsubscribe.
    const listener = (message: string): void => onMessage(message);
    await this.wakeups.watch(name, listener);
    return () => this.wakeups.unwatch(name, listener);
  }

  private name(channel: string): string {
    return this.keys.channel(channel);
  }
}
