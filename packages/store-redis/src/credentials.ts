import type { CredentialRecords, CredentialSlot, SetOptions } from '@sluice/core';
import type { Backend } from './backend.js';
import type { KeySpace } from './keys.js';

/** Slots listed at most by default, as in the memory store. */
const DEFAULT_LIST_LIMIT = 10_000;
/** Keys SCAN looks at per round trip. */
const SCAN_COUNT = 500;

/**
 * The credential vault's sealed records in Redis, one key per upstream and
 * caller, so that every replica reads, and revokes, the same grants. The
 * values are ciphertext: `@sluice/upstream`'s `CredentialVault` seals them first.
 */
export class RedisCredentials implements CredentialRecords {
  constructor(
    private readonly backend: Backend,
    private readonly keys: KeySpace,
  ) {}

  put(slot: CredentialSlot, sealed: string, options?: SetOptions): Promise<void> {
    const ttl = options?.ttlMs === undefined ? undefined : Math.max(1, Math.ceil(options.ttlMs));
    const key = this.keys.credential(slot);
    return this.backend.guard(
      'credentials.put',
      async () => {
        const client = this.backend.connection.client;
        await this.backend.command(() =>
          ttl === undefined ? client.set(key, sealed) : client.set(key, sealed, 'PX', ttl),
        );
      },
      (local) => local.credentials.put(slot, sealed, options),
    );
  }

  get(slot: CredentialSlot): Promise<string | undefined> {
    return this.backend.guard(
      'credentials.get',
      async () => {
        const key = this.keys.credential(slot);
        const value = await this.backend.command(() => this.backend.connection.client.get(key));
        return value ?? undefined;
      },
      (local) => local.credentials.get(slot),
    );
  }

  list(filter: Partial<CredentialSlot> = {}, limit = DEFAULT_LIST_LIMIT): Promise<CredentialSlot[]> {
    return this.backend.guard(
      'credentials.list',
      async () => {
        const slots: CredentialSlot[] = [];
        for await (const keys of this.scan(filter)) {
          for (const key of keys) {
            const slot = this.keys.credentialSlot(key);
            if (slot !== undefined) slots.push(slot);
          }
          if (slots.length >= limit) break;
        }
        return slots.slice(0, limit);
      },
      (local) => local.credentials.list(filter, limit),
    );
  }

  revoke(filter: Partial<CredentialSlot>): Promise<number> {
    return this.backend.guard(
      'credentials.revoke',
      async () => {
        const client = this.backend.connection.client;
        if (filter.upstream !== undefined && filter.subject !== undefined) {
          const key = this.keys.credential({ upstream: filter.upstream, subject: filter.subject });
          return this.backend.command(() => client.del(key));
        }
        let removed = 0;
        for await (const keys of this.scan(filter))
          if (keys.length > 0) removed += await this.backend.command(() => client.del(...keys));
        return removed;
      },
      (local) => local.credentials.revoke(filter),
    );
  }

  /** The matching keys, a SCAN batch at a time. */
  private async *scan(filter: Partial<CredentialSlot>): AsyncGenerator<string[]> {
    const client = this.backend.connection.client;
    const pattern = this.keys.credentialPattern(filter);
    let cursor = '0';
    do {
      const [next, keys] = await this.backend.command(() => client.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
      cursor = next;
      yield keys;
    } while (cursor !== '0');
  }
}
