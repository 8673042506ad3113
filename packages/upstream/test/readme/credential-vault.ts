// The vault example in packages/upstream/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
import { MemoryStore } from '@sluice/core';
import { CredentialVault } from '@sluice/upstream';

const store = new MemoryStore();
const accessToken = 'access';
const refreshToken = 'refresh';
const ttlMs = 3_600_000;
// #region credential-vault
const vault = new CredentialVault(store.credentials, {
  keys: [
    { id: '2026-11', key: process.env.VAULT_KEY_NEW! }, // seals; 32 bytes, base64
    { id: '2026-05', key: process.env.VAULT_KEY_OLD! }, // still opens older records
  ],
});
await vault.put({ upstream: 'saas', subject: 'alice' }, { accessToken, refreshToken }, { ttlMs });
await vault.get({ upstream: 'saas', subject: 'alice' });
await vault.rotate(); // reseals every record with the first key; then the old key can go
await vault.revoke({ subject: 'alice' }); // or { upstream: 'saas' }, or both
// #endregion credential-vault
