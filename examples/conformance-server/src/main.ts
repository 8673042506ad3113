// Serves the conformance server on Streamable HTTP (both protocol versions).
// Port: the first argument, else SLUICE_PORT, else 3000. The risk ledger is
// kept in SLUICE_RISK_LEDGER (a JSON file) when set, else in memory.
import { buildConformanceServer } from './server.js';
import '@sluice/http';

const port = Number(process.argv[2] ?? process.env.SLUICE_PORT ?? 3000);
const ledgerPath = process.env.SLUICE_RISK_LEDGER;
const server = buildConformanceServer({ riskLedger: ledgerPath ? { path: ledgerPath } : 'memory' });
const listener = await server.listen({ port });
server.logger.info(
  { event: 'conformance.ready', url: listener.url.href },
  `conformance server ready at ${listener.url.href}`,
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().then(() => process.exit(0)));
}
