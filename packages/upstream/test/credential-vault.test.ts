// The credential vault over the in-memory store: what the store holds is
// ciphertext bound to its slot, keys rotate, and a wrong key fails clearly.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CoreErrorCode, MemoryStore, SluiceError } from '@sluice/core';
import { CredentialVault } from '../src/index.js';
import { FakeClock } from '@sluice/testing';

const newKey = (): string => randomBytes(32).toString('base64');
const K1 = { id: 'k1', key: newKey() };
const K2 = { id: 'k2', key: newKey() };
const ALICE = { upstream: 'saas', subject: 'alice' };
const BOB = { upstream: 'saas', subject: 'bob' };
const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.access-token-of-alice.signature';
const REFRESH = 'refresh-token-of-alice-0123456789';

function vaultOn(store: MemoryStore, keys = [K1]): CredentialVault {
  return new CredentialVault(store.credentials, { keys });
}

const code = (error: unknown): string | undefined => (SluiceError.is(error) ? error.code : undefined);

describe('CredentialVault', () => {
  it('reads back what it sealed, while the store holds no plaintext', async () => {
    const store = new MemoryStore();
    const vault = vaultOn(store);
    await vault.put(ALICE, { accessToken: TOKEN, refreshToken: REFRESH });
    expect(await vault.get(ALICE)).toEqual({ accessToken: TOKEN, refreshToken: REFRESH });
    const raw = (await store.credentials.get(ALICE)) ?? '';
    expect(raw).toMatch(/^v1\.k1\./);
    for (const secret of [TOKEN, REFRESH, 'access-token-of-alice', Buffer.from(TOKEN).toString('base64')])
      expect(raw).not.toContain(secret);
    expect(await vault.get(BOB)).toBeUndefined();
  });

  it('fails clearly, naming the upstream and the key, when the key is wrong', async () => {
    const store = new MemoryStore();
    await vaultOn(store).put(ALICE, { accessToken: TOKEN });
    const wrong = vaultOn(store, [{ id: 'k1', key: newKey() }]);
    const error: unknown = await wrong.get(ALICE).catch((e: unknown) => e);
    expect(code(error)).toBe(CoreErrorCode.VAULT_UNREADABLE);
    expect((error as Error).message).toMatch(/upstream "saas" for "alice": key "k1" does not open it/);
    expect((error as Error).message).not.toContain(K1.key);
    const missing: unknown = await vaultOn(store, [K2])
      .get(ALICE)
      .catch((e: unknown) => e);
    expect((missing as Error).message).toMatch(/sealed with key "k1", which is not among the configured keys/);
  });

  it("does not open a record copied into another caller's slot", async () => {
    const store = new MemoryStore();
    const vault = vaultOn(store);
    await vault.put(ALICE, { accessToken: TOKEN });
    await store.credentials.put(BOB, (await store.credentials.get(ALICE)) ?? '');
    await expect(vault.get(BOB)).rejects.toSatisfy((e: unknown) => code(e) === CoreErrorCode.VAULT_UNREADABLE);
  });

  it('rotates: a new first key opens old records, reseals them, and the old key can then go', async () => {
    const store = new MemoryStore();
    const old = vaultOn(store, [K1]);
    await old.put(ALICE, { accessToken: 'a-token' });
    await old.put(BOB, { accessToken: 'b-token' });
    const rotating = vaultOn(store, [K2, K1]);
    // Read: resealed on the way.
    expect(await rotating.get(ALICE)).toEqual({ accessToken: 'a-token' });
    expect(await store.credentials.get(ALICE)).toMatch(/^v1\.k2\./);
    expect(await store.credentials.get(BOB)).toMatch(/^v1\.k1\./);
    expect(await rotating.rotate()).toBe(1);
    const rotated = vaultOn(store, [K2]);
    expect(await rotated.get(BOB)).toEqual({ accessToken: 'b-token' });
    expect(await rotated.get(ALICE)).toEqual({ accessToken: 'a-token' });
  });

  it('revokes per caller and per upstream', async () => {
    const store = new MemoryStore();
    const vault = vaultOn(store);
    await vault.put(ALICE, 1);
    await vault.put(BOB, 2);
    await vault.put({ upstream: 'mail', subject: 'alice' }, 3);
    expect(await vault.revoke({ subject: 'alice' })).toBe(2);
    expect(await vault.list()).toEqual([BOB]);
    await vault.put(ALICE, 1);
    expect(await vault.revoke({ upstream: 'saas' })).toBe(2);
    expect(await vault.list()).toEqual([]);
  });

  it('forgets a record after its TTL', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore(clock);
    const vault = vaultOn(store);
    await vault.put(ALICE, 1, { ttlMs: 1_000 });
    clock.advance(999);
    expect(await vault.get(ALICE)).toBe(1);
    clock.advance(1);
    expect(await vault.get(ALICE)).toBeUndefined();
    expect(await vault.list()).toEqual([]);
  });

  it('refuses keys that are not 32 bytes, duplicate ids and no keys, without echoing a key', () => {
    const short = randomBytes(16).toString('base64');
    for (const keys of [[{ id: 'k', key: short }], [K1, { ...K2, id: 'k1' }], []]) {
      let thrown: unknown;
      try {
        new CredentialVault(new MemoryStore().credentials, { keys });
      } catch (error) {
        thrown = error;
      }
      expect(code(thrown)).toBe(CoreErrorCode.INVALID_OPTIONS);
      expect((thrown as Error).message).not.toContain(short);
    }
  });

  it('seals and opens any JSON value in any slot, and never leaves its text in the store', async () => {
    const store = new MemoryStore();
    const vault = vaultOn(store);
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 8 }),
        async (upstream, subject, secret) => {
          const slot = { upstream, subject };
          await vault.put(slot, { secret });
          expect(await vault.get(slot)).toEqual({ secret });
          expect(await store.credentials.get(slot)).not.toContain(secret);
        },
      ),
    );
  });

  it('refuses tampered and oversized records as unreadable', async () => {
    const store = new MemoryStore();
    const vault = vaultOn(store);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (junk) => {
        await store.credentials.put(ALICE, junk);
        await expect(vault.get(ALICE)).rejects.toSatisfy((e: unknown) => code(e) === CoreErrorCode.VAULT_UNREADABLE);
      }),
    );
    await store.credentials.put(ALICE, `v1.k1.${'A'.repeat(70_000)}.x.y`);
    await expect(vault.get(ALICE)).rejects.toSatisfy((e: unknown) => code(e) === CoreErrorCode.VAULT_UNREADABLE);
  });
});
