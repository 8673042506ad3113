// The credential vault over Redis: two stores under one prefix act as two
// replicas. Redis holds ciphertext only; a grant one replica stores or
// revokes is stored or revoked for the other.
import { randomBytes } from 'node:crypto';
import { CoreErrorCode, SluiceError } from '@sluice/core';
import { CredentialVault } from '@sluice/upstream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startRedis } from './helpers/redis-server.js';
import { StoreFactory } from './helpers/stores.js';

const redis = await startRedis();
const look = redis.client();
let stores: StoreFactory | undefined;

afterAll(async () => {
  await redis.close();
});
afterEach(async () => {
  await stores?.closeAll();
});

const KEY = { id: 'k1', key: randomBytes(32).toString('base64') };
const TOKEN = 'access-token-for-alice-at-saas-0123456789';
const REFRESH = 'refresh-token-for-alice-at-saas-0123456789';

/** Every value under the prefix, as Redis holds it. */
async function dump(prefix: string): Promise<string> {
  const keys = await look.keys(`${prefix}*`);
  const values = await Promise.all(keys.map((key) => look.get(key)));
  return JSON.stringify({ keys, values });
}

describe('credentials in Redis', () => {
  it('shares sealed grants between replicas, and Redis holds no plaintext token', async () => {
    stores = new StoreFactory(redis);
    const a = new CredentialVault(stores.open().store.credentials, { keys: [KEY] });
    const b = new CredentialVault(stores.open().store.credentials, { keys: [KEY] });
    await a.put({ upstream: 'saas', subject: 'alice' }, { accessToken: TOKEN, refreshToken: REFRESH });
    expect(await b.get({ upstream: 'saas', subject: 'alice' })).toEqual({ accessToken: TOKEN, refreshToken: REFRESH });
    const contents = await dump(stores.prefix);
    expect(contents).toContain('vault:');
    expect(contents).not.toContain(TOKEN);
    expect(contents).not.toContain(REFRESH);
    expect(contents).not.toContain(Buffer.from(TOKEN).toString('base64'));
  });

  it('fails clearly when a replica has the wrong key', async () => {
    stores = new StoreFactory(redis);
    const a = new CredentialVault(stores.open().store.credentials, { keys: [KEY] });
    const wrong = new CredentialVault(stores.open().store.credentials, {
      keys: [{ id: 'k1', key: randomBytes(32).toString('base64') }],
    });
    await a.put({ upstream: 'saas', subject: 'alice' }, { accessToken: TOKEN });
    const error: unknown = await wrong.get({ upstream: 'saas', subject: 'alice' }).catch((e: unknown) => e);
    expect(SluiceError.is(error) && error.code).toBe(CoreErrorCode.VAULT_UNREADABLE);
    expect((error as Error).message).toMatch(/key "k1" does not open it/);
  });

  it('revokes per caller and per upstream for every replica, with names that look like globs', async () => {
    stores = new StoreFactory(redis);
    const a = new CredentialVault(stores.open().store.credentials, { keys: [KEY] });
    const b = new CredentialVault(stores.open().store.credentials, { keys: [KEY] });
    const slots = [
      { upstream: 'saas', subject: 'alice' },
      { upstream: 'saas', subject: '*' },
      { upstream: 'mail', subject: 'alice' },
      { upstream: 'mail:x', subject: 'b:o[b]' },
    ];
    for (const slot of slots) await a.put(slot, { accessToken: TOKEN });
    expect(await b.list()).toHaveLength(4);
    expect(await b.revoke({ subject: '*' })).toBe(1);
    expect(await a.get({ upstream: 'saas', subject: '*' })).toBeUndefined();
    expect(await a.get({ upstream: 'saas', subject: 'alice' })).toBeDefined();
    expect(await b.revoke({ subject: 'alice' })).toBe(2);
    expect(await a.list()).toEqual([{ upstream: 'mail:x', subject: 'b:o[b]' }]);
    expect(await b.revoke({ upstream: 'mail:x', subject: 'b:o[b]' })).toBe(1);
    expect(await a.list()).toEqual([]);
  });

  it('keeps a TTL on a record in Redis', async () => {
    stores = new StoreFactory(redis);
    const vault = new CredentialVault(stores.open().store.credentials, { keys: [KEY] });
    await vault.put({ upstream: 'saas', subject: 'alice' }, 1, { ttlMs: 60_000 });
    const [key] = await look.keys(`${stores.prefix}vault:*`);
    const ttl = await look.pttl(key ?? '');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });
});
