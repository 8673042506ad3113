import type { Clock } from '../clock.js';
import type { CredentialRecords, CredentialSlot, SetOptions } from './types.js';

/** Slots listed at most, by default: a listing is for people and commands, not for a call's path. */
export const DEFAULT_CREDENTIAL_LIST_LIMIT = 10_000;

interface SealedRecord {
  readonly sealed: string;
  readonly expiresAt: number;
}

/** The vault's sealed records in this process: upstream -> subject -> record. */
export class MemoryCredentials implements CredentialRecords {
  private readonly upstreams = new Map<string, Map<string, SealedRecord>>();

  constructor(private readonly clock: Clock) {}

  put(slot: CredentialSlot, sealed: string, options?: SetOptions): Promise<void> {
    let subjects = this.upstreams.get(slot.upstream);
    if (subjects === undefined) {
      subjects = new Map<string, SealedRecord>();
      this.upstreams.set(slot.upstream, subjects);
    }
    const ttl = options?.ttlMs;
    subjects.set(slot.subject, { sealed, expiresAt: ttl === undefined ? Infinity : this.clock.now() + ttl });
    return Promise.resolve();
  }

  get(slot: CredentialSlot): Promise<string | undefined> {
    const record: SealedRecord | undefined = this.upstreams.get(slot.upstream)?.get(slot.subject);
    if (record === undefined) return Promise.resolve(undefined);
    if (record.expiresAt > this.clock.now()) return Promise.resolve(record.sealed);
    this.remove(slot);
    return Promise.resolve(undefined);
  }

  list(filter: Partial<CredentialSlot> = {}, limit = DEFAULT_CREDENTIAL_LIST_LIMIT): Promise<CredentialSlot[]> {
    return Promise.resolve(this.matching(filter).slice(0, limit));
  }

  revoke(filter: Partial<CredentialSlot>): Promise<number> {
    const slots = this.matching(filter);
    for (const slot of slots) this.remove(slot);
    return Promise.resolve(slots.length);
  }

  private matching(filter: Partial<CredentialSlot>): CredentialSlot[] {
    const now = this.clock.now();
    const out: CredentialSlot[] = [];
    for (const [upstream, subjects] of this.upstreams) {
      if (filter.upstream !== undefined && upstream !== filter.upstream) continue;
      for (const [subject, record] of subjects)
        if ((filter.subject === undefined || subject === filter.subject) && record.expiresAt > now)
          out.push({ upstream, subject });
    }
    return out;
  }

  private remove(slot: CredentialSlot): void {
    const subjects = this.upstreams.get(slot.upstream);
    subjects?.delete(slot.subject);
    if (subjects?.size === 0) this.upstreams.delete(slot.upstream);
  }
}
