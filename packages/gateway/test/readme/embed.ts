// The example in packages/gateway/README.md, type-checked; `node scripts/sync-code-blocks.mjs` copies it there.
// #region embed
import { createGateway, loadConfigFile } from '@sluice/gateway';

const { config } = await loadConfigFile('sluice.config.json'); // ${VAR}s substituted, paths made absolute
const gateway = createGateway(config);
const { http } = await gateway.start(); // imports the upstreams, then listens
gateway.logger.info({ url: http?.url.href, upstreams: gateway.server.upstreams() }, 'serving');
process.once('SIGTERM', () => void gateway.close());
// #endregion embed
