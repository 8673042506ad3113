/** The Redis keys and channel of one semaphore. */
export interface SemaphoreKeys {
  /** Sorted set: lease id -> expiry (Redis server time, ms). */
  readonly leases: string;
  /** Sorted set: waiter id -> arrival order. */
  readonly queue: string;
  /** Sorted set: waiter id -> heartbeat expiry (Redis server time, ms). */
  readonly queueExpiry: string;
  /** Counter behind the fencing tokens: never expires, and starts at Redis time in µs, so tokens only grow. */
  readonly fence: string;
  /** Pub/sub channel on which a release wakes the waiters. */
  readonly wake: string;
  /** The four keys, in the order every script takes them. */
  readonly all: readonly [string, string, string, string];
}

/**
 * Names every key under one prefix. A semaphore's keys share a `{hash tag}`,
 * so that on a Redis Cluster they live in one slot and one script may touch
 * them all.
 */
export class KeySpace {
  constructor(private readonly prefix: string) {}

  semaphore(key: string): SemaphoreKeys {
    const base = `${this.prefix}sem:{${key}}`;
    const leases = `${base}:leases`;
    const queue = `${base}:queue`;
    const queueExpiry = `${base}:queue-expiry`;
    const fence = `${base}:fence`;
    return { leases, queue, queueExpiry, fence, wake: `${base}:wake`, all: [leases, queue, queueExpiry, fence] };
  }

  /** A bus channel (`Store.messages`). */
  channel(name: string): string {
    return `${this.prefix}msg:${name}`;
  }

  /** The audit chain's keys: one `{hash tag}`, so one script may touch them all on a Redis Cluster. */
  audit(): { readonly entries: string; readonly head: string; readonly anchor: string } {
    const base = `${this.prefix}audit:{chain}`;
    return { entries: `${base}:entries`, head: `${base}:head`, anchor: `${base}:anchor` };
  }

  /**
   * The 2025-11-25 session index's keys: one `{hash tag}`, so one script may touch them all on a Redis Cluster;
   * `caller` is the prefix of each caller's own sorted set, in the same slot.
   */
  sessions(): {
    readonly used: string;
    readonly unfinished: string;
    readonly bytes: string;
    readonly memory: string;
    readonly owners: string;
    readonly callerBytes: string;
    readonly caller: string;
  } {
    const base = `${this.prefix}sessions:{index}`;
    return {
      used: `${base}:used`,
      unfinished: `${base}:unfinished`,
      bytes: `${base}:bytes`,
      memory: `${base}:memory`,
      owners: `${base}:owners`,
      callerBytes: `${base}:caller-bytes`,
      caller: `${base}:caller:`,
    };
  }

  value(key: string): string {
    return `${this.prefix}kv:${key}`;
  }

  /** A vault record: upstream and subject in hex, so that neither can inject a glob or a separator. */
  credential(slot: { readonly upstream: string; readonly subject: string }): string {
    return `${this.prefix}vault:${hex(slot.upstream)}:${hex(slot.subject)}`;
  }

  /** A SCAN pattern for the vault records a filter matches. */
  credentialPattern(filter: { readonly upstream?: string | undefined; readonly subject?: string | undefined }): string {
    const upstream = filter.upstream === undefined ? '*' : hex(filter.upstream);
    const subject = filter.subject === undefined ? '*' : hex(filter.subject);
    return `${globEscape(this.prefix)}vault:${upstream}:${subject}`;
  }

  /** The slot a vault record's key names, or undefined for another key. */
  credentialSlot(key: string): { upstream: string; subject: string } | undefined {
    const match = /^vault:([0-9a-f]*):([0-9a-f]*)$/.exec(key.slice(this.prefix.length));
    if (!key.startsWith(this.prefix) || match === null) return undefined;
    return { upstream: unhex(match[1] ?? ''), subject: unhex(match[2] ?? '') };
  }
}

const hex = (text: string): string => Buffer.from(text, 'utf8').toString('hex');
const unhex = (text: string): string => Buffer.from(text, 'hex').toString('utf8');
const globEscape = (text: string): string => text.replace(/[*?[\]\\]/g, '\\$&');
