// The per_user example in packages/core/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
import { MemoryStore, createServer } from '@sluice/core';
import '@sluice/http';
import { CredentialVault } from '@sluice/upstream';

// #region per-user
const store = new MemoryStore(); // or a Redis store: grants and consent steps are shared by replicas
const credentialVault = new CredentialVault(store.credentials, { keys: [{ id: 'k1', key: process.env.VAULT_KEY! }] });
const server = createServer({ name: 'gateway', version: '1.0.0', store, credentialVault });
await server.import({
  name: 'tracker',
  connection: { type: 'http', url: 'https://mcp.tracker.example/mcp' },
  auth: {
    type: 'per_user',
    clientId: 'sluice',
    clientSecret: process.env.TRACKER_SECRET!,
    issuer: 'https://login.tracker.example',
    scope: 'issues.read offline_access',
  },
});
// Serves /oauth/upstream/connect and /oauth/upstream/callback beside the MCP endpoint.
await server.listen({ auth: { type: 'apiKeys', keys: [{ name: 'alice', key: process.env.ALICE_KEY! }] } });
// #endregion per-user
