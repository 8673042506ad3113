// The example in packages/store-redis/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region quick-start
import { createServer } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';
import { redisStore } from '@sluice/store-redis';
import '@sluice/http';

const store = redisStore({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }, { keyPrefix: 'billing:' });
await store.ready(); // fail fast at start if Redis is unreachable (optional)
const server = createServer({ name: 'billing', version: '1.0.0', store, plugins: [concurrency()] });
server.tool({
  name: 'refund',
  policy: { concurrency: { maxActive: 5, maxQueue: 20 } },
  handler: async () => ({ content: [{ type: 'text', text: 'refunded' }] }),
});
await server.listen({ port: 8080, host: '0.0.0.0' });
process.once('SIGTERM', () => void server.close().then(() => store.close()));
// #endregion quick-start
