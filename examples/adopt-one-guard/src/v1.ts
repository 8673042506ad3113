import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { adopt } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';
import type { ForecastApi } from './forecast.js';

/** The server as it was before Sluice: the v1 SDK, unchanged. */
export function weatherServer(api: ForecastApi): McpServer {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  server.registerTool(
    'forecast',
    { description: 'The forecast for a city', inputSchema: { city: z.string() }, annotations: { readOnlyHint: true } },
    async ({ city }) => ({ content: [{ type: 'text', text: await api.forecast(city) }] }),
  );
  return server;
}

// #region adopt-v1
/** The same server with one guard: at most 2 forecasts at once, 2 more waiting. */
export function guardedWeatherServer(api: ForecastApi): { server: McpServer; sluice: SluiceServer } {
  const server = weatherServer(api);
  const sluice = adopt(server, [concurrency({ tools: { forecast: { maxActive: 2, maxQueue: 2 } } })]);
  return { server, sluice };
}
// #endregion adopt-v1
