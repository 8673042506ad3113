// The example in packages/plugin-authz/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.

// #region quick-start
import { createServer } from '@sluice/core';
import { authz } from '@sluice/plugin-authz';
import '@sluice/http';

const server = createServer({
  name: 'billing',
  version: '1.0.0',
  plugins: [
    authz({
      rules: [
        { when: { scopes: ['billing:read'] }, allow: ['invoice_get', 'invoice_list'] },
        { when: { claims: { groups: 'finance' } }, allow: ['invoice_*', '!invoice_delete'] },
        { when: { keyNames: ['ops-bot'] }, allow: ['*'] },
      ],
    }),
  ],
});
await server.listen({ auth: { type: 'oauth', authorizationServers: ['https://auth.example.com'] } });
// #endregion quick-start
