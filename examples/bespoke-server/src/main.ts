// Starts the inventory server on Streamable HTTP. Port from SLUICE_PORT (default 3000).
import { buildServer } from './server.js';
import '@sluice/http';

const server = await buildServer();
const listener = await server.listen({ port: Number(process.env.SLUICE_PORT ?? 3000) });
server.logger.info(
  { event: 'example.ready', url: listener.url.href },
  `inventory server ready at ${listener.url.href}`,
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().then(() => process.exit(0)));
}
