import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { CoreErrorCode, SluiceError, parseOptions } from '@sluice/core';
import type { CredentialRecords, CredentialSlot, SetOptions } from '@sluice/core';

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** A sealed record larger than this is not opened: nothing Sluice seals comes near it. */
const MAX_SEALED_CHARS = 64 * 1024;

const KeyId = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'use 1-32 letters, digits, "_" or "-"');
const Key = z
  .string()
  .refine((value) => decodeKey(value) !== undefined, 'must be 32 bytes, base64 or base64url encoded (44 characters)');

/** The vault's keys: the first seals, every one opens; list the old one second while rotating. */
export const CredentialVaultOptions = z
  .object({
    keys: z
      .array(
        z
          .object({
            id: KeyId.describe("The key's name, written beside each sealed record; unique."),
            key: Key.describe(
              '32 random bytes, base64 or base64url (`openssl rand -base64 32`); pass it through `${VAR}`.',
            ),
          })
          .strict(),
      )
      .min(1)
      .max(16)
      .refine((keys) => new Set(keys.map((k) => k.id)).size === keys.length, 'key ids must be unique')
      .describe('AES-256-GCM keys (32 bytes, base64): the first seals, every one opens. Pass them through `${VAR}`.'),
  })
  .strict();
export type CredentialVaultOptions = z.input<typeof CredentialVaultOptions>;

function decodeKey(value: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return undefined;
  const bytes = Buffer.from(value, value.includes('-') || value.includes('_') ? 'base64url' : 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

/**
 * Upstream credentials (tokens, refresh tokens) per upstream and caller,
 * encrypted with AES-256-GCM before they reach the store: a memory store,
 * Redis or a dump of either holds ciphertext only. Each record is bound to
 * its slot (upstream and subject are the additional data), so a record
 * copied into another caller's slot does not open. Records sealed with an
 * older key are resealed with the first key when read, or all at once by
 * `rotate()`.
 */
export class CredentialVault {
  private readonly keys: ReadonlyMap<string, Buffer>;
  private readonly current: { readonly id: string; readonly key: Buffer };

  constructor(
    private readonly records: CredentialRecords,
    options: CredentialVaultOptions,
  ) {
    const parsed = parseOptions('credential-vault', CredentialVaultOptions, options);
    this.keys = new Map(parsed.keys.map((k) => [k.id, decodeKey(k.key) as Buffer]));
    const first = parsed.keys[0] as { id: string };
    this.current = { id: first.id, key: this.keys.get(first.id) as Buffer };
  }

  async put(slot: CredentialSlot, credential: unknown, options?: SetOptions): Promise<void> {
    await this.records.put(slot, this.seal(slot, JSON.stringify(credential)), options);
  }

  /** The credential in `slot`, or undefined; throws `VAULT_UNREADABLE` when the keys cannot open it. */
  async get<T = unknown>(slot: CredentialSlot): Promise<T | undefined> {
    const sealed = await this.records.get(slot);
    if (sealed === undefined) return undefined;
    const { plaintext, keyId } = this.open(slot, sealed);
    if (keyId !== this.current.id) await this.records.put(slot, this.seal(slot, plaintext));
    return JSON.parse(plaintext) as T;
  }

  list(filter?: Partial<CredentialSlot>): Promise<CredentialSlot[]> {
    return this.records.list(filter);
  }

  revoke(filter: Partial<CredentialSlot>): Promise<number> {
    return this.records.revoke(filter);
  }

  /** Reseals every record with the first key; resolves with how many were resealed. */
  async rotate(): Promise<number> {
    let resealed = 0;
    for (const slot of await this.records.list()) {
      const sealed = await this.records.get(slot);
      if (sealed === undefined || keyIdOf(sealed) === this.current.id) continue;
      await this.records.put(slot, this.seal(slot, this.open(slot, sealed).plaintext));
      resealed++;
    }
    return resealed;
  }

  private seal(slot: CredentialSlot, plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(additionalData(slot));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const parts = [iv, body, cipher.getAuthTag()].map((b) => b.toString('base64url'));
    return [FORMAT, this.current.id, ...parts].join('.');
  }

  private open(slot: CredentialSlot, sealed: string): { plaintext: string; keyId: string } {
    const parts = sealed.length <= MAX_SEALED_CHARS ? sealed.split('.') : [];
    const [format, keyId, iv, body, tag] = parts;
    if (parts.length !== 5 || format !== FORMAT || keyId === undefined || iv === undefined || body === undefined)
      throw unreadable(slot, 'it is not a sealed vault record');
    const key = this.keys.get(keyId);
    if (key === undefined)
      throw unreadable(slot, `it was sealed with key "${keyId}", which is not among the configured keys`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(additionalData(slot));
      decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
      const plaintext = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
      return { plaintext: plaintext.toString('utf8'), keyId };
    } catch {
      throw unreadable(slot, `key "${keyId}" does not open it: the key is wrong, or the record was altered`);
    }
  }
}

function additionalData(slot: CredentialSlot): Buffer {
  return Buffer.from(JSON.stringify([slot.upstream, slot.subject]), 'utf8');
}

function keyIdOf(sealed: string): string | undefined {
  return sealed.split('.', 2)[1];
}

function unreadable(slot: CredentialSlot, why: string): SluiceError {
  return new SluiceError(
    CoreErrorCode.VAULT_UNREADABLE,
    `The credential vault cannot open the record of upstream "${slot.upstream}" for "${slot.subject}": ${why}. Configure the key it was sealed with, or revoke the record so that the caller connects again.`,
  );
}
