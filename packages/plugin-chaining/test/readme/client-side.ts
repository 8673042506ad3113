// The example in packages/plugin-chaining/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
import type { Client } from '@modelcontextprotocol/client';

declare const client: Client;

// #region client-side
import { callToolWithChaining } from '@sluice/plugin-chaining';
const result = await callToolWithChaining(client, 'check_account_issue', { customerId: '12345' }, { maxDepth: 5 });
// #endregion client-side
export { result };
