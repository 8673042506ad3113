import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { adopt } from '@sluice/core';
import type { SluiceServer } from '@sluice/core';
import { concurrency } from '@sluice/plugin-concurrency';
import type { ForecastApi } from './forecast.js';

// #region adopt-v2
/** A v2 SDK server gets the guard the same way. */
export function guardedWeatherServerV2(api: ForecastApi): { server: McpServer; sluice: SluiceServer } {
  const server = new McpServer({ name: 'weather', version: '2.0.0' });
  server.registerTool(
    'forecast',
    {
      description: 'The forecast for a city',
      inputSchema: z.object({ city: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ city }) => ({ content: [{ type: 'text', text: await api.forecast(city) }] }),
  );
  const sluice = adopt(server, [concurrency({ tools: { forecast: { maxActive: 2, maxQueue: 2 } } })]);
  return { server, sluice };
}
// #endregion adopt-v2
