import { createServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { adopt } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';
import type { ForecastApi } from './forecast.js';
import { weatherServer } from './v1.js';

// #region adopt-stateless
/**
 * The v1 SDK's stateless Streamable HTTP pattern: a new server per request.
 * `adopt()` runs in the factory, so every request gets a fresh Sluice server;
 * the guard still holds across them, because they share one store.
 */
export function statelessWeatherHttp(api: ForecastApi): HttpServer {
  return createServer((req, res) => {
    const server = weatherServer(api);
    const sluice = adopt(server, [concurrency({ tools: { forecast: { maxActive: 1, maxQueue: 0 } } })]);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
      void sluice.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
}
// #endregion adopt-stateless
