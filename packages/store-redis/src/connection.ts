import nodeModule from 'node:module';
import type * as IORedis from 'ioredis';
import type { Redis, RedisOptions } from 'ioredis';

// ioredis, and the modules it loads, come with the first store that opens a connection of its own, not with the
// package: a gateway whose config names no Redis imports this package for its config schema only. ioredis is
// CommonJS, so Node's require loads it at once. `__filename` names this file in the CommonJS build, whose
// `import.meta` is empty.
let ioredis: typeof IORedis | undefined;
function loadIoredis(): typeof IORedis {
  const url = (import.meta as { url?: string }).url;
  ioredis ??= nodeModule.createRequire(typeof url === 'string' && url !== '' ? url : __filename)(
    'ioredis',
  ) as typeof IORedis;
  return ioredis;
}

/** Thrown (and then mapped by the loss policy) when no command can be sent. */
export class LinkDown extends Error {
  override readonly name = 'LinkDown';
}

export type LinkState = 'connecting' | 'up' | 'down' | 'closed';

export interface LinkEvents {
  /** Redis was lost mid-run, or never came up within the connect timeout. */
  onDown(reason: string, atStart: boolean): void;
  /** Redis is reachable again after `onDown`. */
  onUp(downMs: number): void;
}

/**
 * Settings of the connections the store opens itself: a command fails at once
 * while Redis is away (no offline queue, no silent resend of a script that
 * may already have run), and reconnection goes on in the background.
 */
function ownSettings(connectTimeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: 5_000,
    connectTimeout: Math.max(connectTimeoutMs, 1_000),
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
  };
}

/** A URL without its credentials or query (which may carry `?password=`), for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.username) parsed.username = '***';
    if (parsed.search) parsed.search = '?***';
    return parsed.toString();
  } catch {
    return 'redis (unparseable URL)';
  }
}

/**
 * The store's connections to Redis, and whether commands can be sent now.
 * Before the first connection, commands wait for it up to the connect
 * timeout; after a loss they fail fast until Redis is back.
 */
export class Connection {
  readonly client: Redis;
  readonly subscriber: Redis;
  readonly where: string;
  state: LinkState = 'connecting';
  /** What the last connection failure said; cleared when Redis is back. */
  lastError: string | undefined;
  private readonly ownsClient: boolean;
  private readonly firstContact: Promise<void>;
  private settleFirstContact: () => void = () => {};
  private downSince = 0;
  private readonly startTimer: NodeJS.Timeout;

  constructor(
    target: { url: string } | { client: Redis },
    connectTimeoutMs: number,
    private readonly events: LinkEvents,
  ) {
    const settings = ownSettings(connectTimeoutMs);
    if ('url' in target) {
      this.client = new (loadIoredis().Redis)(target.url, settings);
      this.where = redactUrl(target.url);
      this.ownsClient = true;
    } else {
      this.client = target.client;
      const { host, port } = target.client.options;
      this.where = `redis://${host ?? 'localhost'}:${port ?? 6379}`;
      this.ownsClient = false;
    }
    // Subscriptions may wait for Redis to come back: they change nothing, so they are safe to queue and resend.
    this.subscriber = this.client.duplicate({
      ...settings,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      autoResendUnfulfilledCommands: true,
      commandTimeout: undefined,
      lazyConnect: false,
    });
    this.firstContact = new Promise((resolve) => (this.settleFirstContact = resolve));
    this.client.on('ready', () => this.up());
    this.client.on('close', () => this.down());
    this.client.on('error', (error: Error) => (this.lastError = error.message));
    // The subscriber's errors are seen on the client too; without a listener ioredis prints them.
    this.subscriber.on('error', () => {});
    this.startTimer = setTimeout(() => this.giveUpStarting(connectTimeoutMs), connectTimeoutMs);
    this.startTimer.unref();
    if (this.client.status === 'ready') this.up();
    else if (this.client.status === 'wait') this.client.connect().catch(() => {});
  }

  /** Resolves when a command may be sent; rejects with `LinkDown` when none can be. */
  usable(): Promise<void> | undefined {
    if (this.state === 'up') return undefined;
    if (this.state === 'connecting') return this.firstContact.then(() => this.usable());
    return Promise.reject(new LinkDown(this.state === 'closed' ? 'the store is closed' : this.reason()));
  }

  /** Why Redis cannot be used, in words for an error message. */
  reason(): string {
    return this.lastError ?? 'connection closed';
  }

  async close(): Promise<void> {
    const wasUp = this.state === 'up';
    this.state = 'closed';
    clearTimeout(this.startTimer);
    this.settleFirstContact();
    this.subscriber.disconnect();
    if (!this.ownsClient) return;
    if (wasUp) await this.client.quit().catch(() => this.client.disconnect());
    else this.client.disconnect();
  }

  private up(): void {
    if (this.state === 'closed' || this.state === 'up') return;
    const wasDown = this.state === 'down';
    this.state = 'up';
    this.lastError = undefined;
    clearTimeout(this.startTimer);
    this.settleFirstContact();
    if (wasDown) this.events.onUp(Date.now() - this.downSince);
  }

  private down(): void {
    if (this.state !== 'up') return;
    this.state = 'down';
    this.downSince = Date.now();
    this.events.onDown(this.reason(), false);
  }

  private giveUpStarting(timeoutMs: number): void {
    if (this.state !== 'connecting') return;
    this.state = 'down';
    this.downSince = Date.now();
    this.lastError = `no connection within ${timeoutMs} ms: ${this.reason()}`;
    this.settleFirstContact();
    this.events.onDown(this.reason(), true);
  }
}
